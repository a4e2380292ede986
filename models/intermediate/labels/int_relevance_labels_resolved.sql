{#- One grade per (retrieval, asset) of a logged retrieval, from
    stg_lara__relevance_labels: a human judgement wins over an LLM one, the
    latest wins within a kind; equal times keep the higher grade so the
    choice is deterministic. Session-grained and incremental on the
    retrieval's session (macros/metrics/labels.sql lara_resolved_labels). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

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
