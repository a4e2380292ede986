{#- Every retrieval with its prompt's scope: surface, user, synthetic and
    misroute flags, and the reported role (`unknown` where the log has none).
    Synthetic when its prompt is (metrics.md v2: the unit is the prompt). A
    retrieval whose prompt is not in the prompts table keeps surface
    `unknown` and is synthetic only when its session has prompts, all of them
    synthetic (macros/metrics/synthetic_scope.sql).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select * from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_session_rows_since_first(ref('stg_lara__retrievals'), 'retrieved_at') }}

),

prompts as (

    {{ lara_event_prompts('retrievals') }}

),

synthetic_sessions as (

    {{ lara_synthetic_sessions('prompts') }}

),

joined as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        prompts.user_id,
        coalesce(prompts.surface, 'unknown') as surface,
        coalesce(prompts.is_assistant_surface, false) as is_assistant_surface,
        retrievals.retrieval_role as retrieval_role_logged,
        coalesce(retrievals.retrieval_role, 'unknown') as retrieval_role,
        retrievals.query_text,
        retrievals.returned_asset_ids,
        retrievals.displayed_asset_ids,
        retrievals.returned_count,
        retrievals.returned_count = 0 as is_empty,
        retrievals.retrieved_at,
        cast(retrievals.retrieved_at as date) as retrieval_date,
        prompts.prompt_id is not null as has_known_prompt,
        prompts.prompt_kind,
        case
            when prompts.prompt_id is not null then prompts.is_synthetic
            else coalesce(synthetic_sessions.is_synthetic_session, false)
        end as is_synthetic,
        coalesce(prompts.is_misrouted, false) as is_misrouted
    from retrievals
    left join prompts
        on retrievals.prompt_id = prompts.prompt_id
    left join synthetic_sessions
        on retrievals.session_guid = synthetic_sessions.session_guid

),

final as (

    select
        *,
        not is_synthetic and not is_misrouted as is_in_tier_scope
    from joined

)

{{ lara_stamp_rows('final') }}
