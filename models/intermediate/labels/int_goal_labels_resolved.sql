{#- One goal label per logged prompt, from stg_lara__goal_labels: a human
    judgement wins over an LLM one, the latest wins within a kind. The rule,
    and how the model is incremental (strategy lara_replace_sessions, the
    prompt's session), are those of lara_resolved_labels
    (macros/metrics/labels.sql). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

{{ lara_resolved_labels(
    labels='stg_lara__goal_labels',
    subjects='stg_lara__prompts',
    subject_id='prompt_id',
    label_columns=['goal_achieved'],
) }}
