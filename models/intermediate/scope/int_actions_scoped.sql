{#- Every action with its scope, the prompt's surface when it has a prompt,
    and the surface it is reported under (the prompt's, else the surface of
    its session's first prompt, else `unknown`). Synthetic (metrics.md v2 scope rules: the unit is the prompt):
    - an action whose prompt is known: when that prompt is synthetic;
    - an action without a known prompt: when its session has prompts, all of
      them synthetic (macros/metrics/synthetic_scope.sql), or when its
      source_retrieval_id names a synthetic retrieval (lineage hangs it off
      synthetic traffic, in any session). A placement chain that leads to a
      synthetic retrieval is resolved after attribution
      (int_action_attributions.is_action_synthetic).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the actions of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

actions as (

    select * from {{ ref('stg_lara__actions') }}
    where {{ lara_in_session_events_this_run('session_guid', 'acted_at') }}

),

prompts as (

    {{ lara_event_prompts('actions') }}

),

source_retrievals as (

    select
        retrieval_id,
        is_synthetic
    from {{ ref('int_retrievals_scoped') }}
    where
        retrieval_id in (select actions.source_retrieval_id from actions)

),

synthetic_sessions as (

    {{ lara_synthetic_sessions('prompts') }}

),

session_first_prompts as (

    select
        session_guid,
        surface,
        row_number() over (partition by session_guid order by prompted_at, prompt_id) as prompt_sequence
    from prompts

),

session_surfaces as (

    select
        session_guid,
        surface
    from session_first_prompts
    where prompt_sequence = 1

),

joined as (

    select
        actions.action_id,
        actions.session_guid,
        actions.prompt_id,
        actions.actor,
        actions.action_type,
        actions.consumed_asset_id,
        actions.source_retrieval_id,
        actions.document_id,
        actions.acted_at,
        cast(actions.acted_at as date) as action_date,
        actions.action_type in ('export', 'share', 'download') as is_outcome_type,
        prompts.surface as prompt_surface,
        coalesce(prompts.surface, session_surfaces.surface, 'unknown') as reporting_surface,
        prompts.prompt_id is not null as has_known_prompt,
        case
            when prompts.prompt_id is not null then prompts.is_synthetic
            else
                coalesce(synthetic_sessions.is_synthetic_session, false)
                or coalesce(source_retrievals.is_synthetic, false)
        end as is_synthetic
    from actions
    left join prompts
        on actions.prompt_id = prompts.prompt_id
    left join synthetic_sessions
        on actions.session_guid = synthetic_sessions.session_guid
    left join source_retrievals
        on actions.source_retrieval_id = source_retrievals.retrieval_id
    left join session_surfaces
        on actions.session_guid = session_surfaces.session_guid

)

{{ lara_stamp_rows('joined') }}
