{#- Every action with its scope: synthetic when its prompt is synthetic or it
    happened in a session with synthetic prompts; the prompt's surface when it
    has a prompt.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the actions of lara_sessions_this_run. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

actions as (

    select * from {{ ref('stg_lara__actions') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

prompts as (

    select * from {{ ref('int_prompts_scoped') }}
    {%- if is_incremental() %}
    where
        prompt_id in (select prompt_id from actions)
        or session_guid in (select session_guid from actions)
    {%- endif %}

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

{{ lara_stamp_rows('joined') }}
