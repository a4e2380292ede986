{#- Every retrieval with its prompt's scope: surface, user, synthetic and
    misroute flags, and the reported role (`unknown` where the log has none).
    A retrieval whose prompt is not in the prompts table keeps surface
    `unknown` and counts as non-synthetic unless its session is synthetic.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select * from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

prompts as (

    select * from {{ ref('int_prompts_scoped') }}
    {%- if is_incremental() %}
    where
        prompt_id in (select prompt_id from retrievals)
        or session_guid in (select session_guid from retrievals)
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

{{ lara_stamp_rows('final') }}
