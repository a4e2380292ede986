{#- One goal label per logged prompt, from stg_lara__goal_labels: a human
    judgement wins over an LLM one, the latest wins within a kind. The rule,
    and how the model is incremental (strategy lara_replace_sessions, the
    prompt's session), are those of lara_resolved_labels
    (macros/metrics/labels.sql). -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

{{ lara_resolved_labels(
    labels='stg_lara__goal_labels',
    subjects='stg_lara__prompts',
    subject_id='prompt_id',
    label_columns=['goal_achieved'],
) }}
