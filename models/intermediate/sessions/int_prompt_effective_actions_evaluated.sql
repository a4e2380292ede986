{#- One row per (assistant prompt, effective-action definition of the seed):
    whether a user action of one of the definition's types falls in the
    prompt's window (int_prompt_actions_windowed). Non-synthetic prompts on
    chat and editor_assistant only: the effective action rate is defined on
    assistant prompts.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompts as (

    select * from {{ ref('int_prompts_scoped') }}
    where not is_synthetic and is_assistant_surface and {{ lara_in_session_rows_this_run('session_guid') }}

),

windowed_actions as (

    select * from {{ ref('int_prompt_actions_windowed') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

definitions as (

    select * from {{ ref('effective_action_definitions') }}

),

definition_names as (

    select distinct
        definition_name,
        breadth_order
    from definitions

),

matched_actions as (

    select
        windowed_actions.prompt_id,
        definitions.definition_name,
        count(distinct windowed_actions.action_id) as effective_action_count
    from windowed_actions
    inner join definitions
        on windowed_actions.action_type = definitions.action_type
    group by windowed_actions.prompt_id, definitions.definition_name

),

evaluated as (

    select
        prompts.prompt_id,
        definition_names.definition_name,
        definition_names.breadth_order,
        prompts.session_guid,
        prompts.surface,
        prompts.prompt_date,
        coalesce(matched_actions.effective_action_count, 0) as effective_action_count,
        matched_actions.prompt_id is not null as has_effective_action
    from prompts
    cross join definition_names
    left join matched_actions
        on
            prompts.prompt_id = matched_actions.prompt_id
            and definition_names.definition_name = matched_actions.definition_name

)

{{ lara_stamp_rows('evaluated') }}
