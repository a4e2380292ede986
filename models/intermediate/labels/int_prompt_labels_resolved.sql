{#- The retrieval-intent label of each logged prompt, one per prompt, from
    stg_lara__prompt_labels: a human judgement wins over an LLM one, the
    latest wins within a kind (lara_resolved_labels in
    macros/metrics/labels.sql, which also makes it session-grained and
    incremental, strategy lara_replace_sessions). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

{{ lara_resolved_labels(
    labels='stg_lara__prompt_labels',
    subjects='stg_lara__prompts',
    subject_id='prompt_id',
    label_columns=['has_retrieval_intent', 'retrieval_intent_count'],
) }}
