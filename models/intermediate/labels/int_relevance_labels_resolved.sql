{#- One grade per (retrieval, asset) of a logged retrieval, from
    stg_lara__relevance_labels: a human judgement wins over an LLM one, the
    latest wins within a kind; equal times keep the higher grade so the
    choice is deterministic. Session-grained and incremental on the
    retrieval's session (macros/metrics/labels.sql lara_resolved_labels). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

{{ lara_resolved_labels(
    labels='stg_lara__relevance_labels',
    subjects='stg_lara__retrievals',
    subject_id='retrieval_id',
    keys=['retrieval_id', 'asset_id'],
    label_columns=['grade'],
    tie_breakers=['grade desc'],
) }}
