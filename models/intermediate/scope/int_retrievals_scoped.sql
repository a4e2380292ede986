{#- Every retrieval with its prompt's scope: surface, user, synthetic and
    misroute flags, and the reported role (`unknown` where the log has none).
    A retrieval whose prompt is not in the prompts table keeps surface
    `unknown` and counts as non-synthetic unless its session is synthetic. -#}
with

retrievals as (

    select * from {{ ref('stg_lara__retrievals') }}

),

prompts as (

    select * from {{ ref('int_prompts_scoped') }}

),

synthetic_sessions as (

    select
        session_guid,
        max(case when is_synthetic then 1 else 0 end) = 1 as is_synthetic_session
    from prompts
    group by session_guid

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
        coalesce(prompts.is_synthetic, synthetic_sessions.is_synthetic_session, false) as is_synthetic,
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

select * from final
