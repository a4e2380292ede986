{#- Every action with its scope: synthetic when its prompt is synthetic or it
    happened in a session with synthetic prompts; the prompt's surface when it
    has a prompt. -#}
with

actions as (

    select * from {{ ref('stg_lara__actions') }}

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
        coalesce(prompts.is_synthetic, false)
        or coalesce(synthetic_sessions.is_synthetic_session, false) as is_synthetic
    from actions
    left join prompts
        on actions.prompt_id = prompts.prompt_id
    left join synthetic_sessions
        on actions.session_guid = synthetic_sessions.session_guid

)

select * from joined
