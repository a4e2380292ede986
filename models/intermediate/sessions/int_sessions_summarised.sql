{#- One row per session_guid seen in prompts or actions (synthetic ones
    included and flagged): its prompts per surface, its first event, its
    surface, its clicks, and its outcome events (user export / share /
    download) in the session and, through lineage, outside it.
    - Synthetic scope is per prompt (metrics.md v2): counts, first event
      and surface are over the session's in-scope prompts and actions. A
      session is synthetic (and out of every session metric) when it has
      prompts and all of them are synthetic, or, without prompts, when it has
      actions and all of them hang off synthetic traffic (by lineage:
      int_actions_scoped, int_action_attributions.is_action_synthetic). A
      session of real prompts that also holds a synthetic probe stays in.
    - session_surface: surface of the session's first assistant prompt, else
      of its first prompt; null for a session without prompts.
    - Outcomes outside the session: distinct user outcome events logged in
      another session and attributed to one of this session's retrievals by
      `direct`, `placement` or `document` (the retrieval-driven methods of
      Tier 3; `temporal` never crosses sessions). Non-synthetic attributions
      only.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompts as (

    select * from {{ ref('int_prompts_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

logged_actions as (

    select * from {{ ref('int_actions_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

lineage_synthetic_actions as (

    {{ lara_lineage_synthetic_actions(lara_in_sessions_this_run('action_session_guid')) }}

),

actions as (

    select
        logged_actions.session_guid,
        logged_actions.acted_at,
        logged_actions.actor,
        logged_actions.action_type,
        logged_actions.is_outcome_type,
        logged_actions.is_synthetic or lineage_synthetic_actions.action_id is not null as is_synthetic
    from logged_actions
    left join lineage_synthetic_actions
        on logged_actions.action_id = lineage_synthetic_actions.action_id

),

retrievals as (

    select * from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

attributions as (

    select * from {{ ref('int_action_attributions') }}
    where
        {{ lara_in_sessions_this_run('retrieval_session_guid') }}
        or {{ lara_in_sessions_this_run('action_session_guid') }}

),

cross_session_outcomes as (

    select distinct
        action_id,
        action_session_guid,
        retrieval_session_guid
    from attributions
    where
        actor = 'user'
        and action_type in ('export', 'share', 'download')
        and attribution_method in ('direct', 'placement', 'document')
        and is_cross_session
        and not is_synthetic

),

session_guids as (

    select session_guid from prompts
    union
    select session_guid from actions

),

session_prompts as (

    select
        session_guid,
        coalesce(min(case when not is_synthetic then prompted_at end), min(prompted_at)) as first_prompted_at,
        count(case when not is_synthetic then 1 end) as prompt_count,
        count(case when not is_synthetic and is_assistant_surface then 1 end) as assistant_prompt_count,
        count(case when not is_synthetic and surface = 'chat' then 1 end) as chat_prompt_count,
        count(case when not is_synthetic and surface = 'editor_assistant' then 1 end) as editor_assistant_prompt_count,
        count(case when not is_synthetic and surface = 'template_search' then 1 end) as template_search_prompt_count,
        count(case when not is_synthetic and is_retrieval_turn then 1 end) as retrieval_turn_count,
        min(case when is_synthetic then 1 else 0 end) = 1 as is_synthetic_session
    from prompts
    group by session_guid

),

ranked_prompts as (

    select
        session_guid,
        surface,
        row_number() over (
            partition by session_guid
            order by
                case when is_synthetic then 1 else 0 end,
                case when is_assistant_surface then 0 else 1 end,
                prompted_at,
                prompt_id
        ) as surface_rank
    from prompts

),

session_surfaces as (

    select
        session_guid,
        surface as session_surface
    from ranked_prompts
    where surface_rank = 1

),

session_actions as (

    select
        session_guid,
        coalesce(min(case when not is_synthetic then acted_at end), min(acted_at)) as first_acted_at,
        count(case when not is_synthetic and actor = 'user' then 1 end) as user_action_count,
        count(case when not is_synthetic and actor = 'user' and action_type = 'click' then 1 end) as user_click_count,
        count(
            case when not is_synthetic and actor = 'user' and is_outcome_type then 1 end
        ) as in_session_outcome_count,
        min(case when is_synthetic then 1 else 0 end) = 1 as are_all_actions_synthetic
    from actions
    group by session_guid

),

session_retrievals as (

    select
        session_guid,
        count(case when not is_synthetic then 1 end) as retrieval_count
    from retrievals
    group by session_guid

),

outcomes_credited_to_session as (

    select
        retrieval_session_guid as session_guid,
        count(distinct action_id) as outside_session_outcome_count
    from cross_session_outcomes
    group by retrieval_session_guid

),

outcomes_credited_elsewhere as (

    select
        action_session_guid as session_guid,
        count(distinct action_id) as in_session_outcome_credited_elsewhere_count
    from cross_session_outcomes
    group by action_session_guid

),

joined as (

    select
        session_guids.session_guid,
        session_surfaces.session_surface,
        coalesce(session_prompts.first_prompted_at, session_actions.first_acted_at) as session_started_at,
        session_prompts.first_prompted_at,
        coalesce(session_prompts.prompt_count, 0) as prompt_count,
        coalesce(session_prompts.assistant_prompt_count, 0) as assistant_prompt_count,
        coalesce(session_prompts.chat_prompt_count, 0) as chat_prompt_count,
        coalesce(session_prompts.editor_assistant_prompt_count, 0) as editor_assistant_prompt_count,
        coalesce(session_prompts.template_search_prompt_count, 0) as template_search_prompt_count,
        coalesce(session_prompts.retrieval_turn_count, 0) as retrieval_turn_count,
        coalesce(session_retrievals.retrieval_count, 0) as retrieval_count,
        coalesce(session_actions.user_action_count, 0) as user_action_count,
        coalesce(session_actions.user_click_count, 0) as user_click_count,
        coalesce(session_actions.in_session_outcome_count, 0) as in_session_outcome_count,
        coalesce(
            outcomes_credited_elsewhere.in_session_outcome_credited_elsewhere_count, 0
        ) as in_session_outcome_credited_elsewhere_count,
        coalesce(outcomes_credited_to_session.outside_session_outcome_count, 0) as outside_session_outcome_count,
        coalesce(
            session_prompts.is_synthetic_session,
            session_actions.are_all_actions_synthetic,
            false
        ) as is_synthetic
    from session_guids
    left join session_prompts
        on session_guids.session_guid = session_prompts.session_guid
    left join session_surfaces
        on session_guids.session_guid = session_surfaces.session_guid
    left join session_actions
        on session_guids.session_guid = session_actions.session_guid
    left join session_retrievals
        on session_guids.session_guid = session_retrievals.session_guid
    left join outcomes_credited_to_session
        on session_guids.session_guid = outcomes_credited_to_session.session_guid
    left join outcomes_credited_elsewhere
        on session_guids.session_guid = outcomes_credited_elsewhere.session_guid

),

final as (

    select
        *,
        cast(session_started_at as date) as session_date
    from joined

)

{{ lara_stamp_rows('final') }}
