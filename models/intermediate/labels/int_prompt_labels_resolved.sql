{#- One prompt label per prompt: a human judgement wins over an LLM one, the
    latest wins within a kind.

    Labels of logged prompts only (a label whose prompt is not, or not yet,
    logged is resolved once the prompt arrives: its session is then
    recomputed). Session-grained and incremental (strategy
    lara_replace_sessions, the prompt's session): a run recomputes the
    prompts of lara_sessions_this_run, which holds every session with a
    newly loaded label. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

prompts as (

    select
        prompt_id,
        session_guid
    from {{ ref('stg_lara__prompts') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

labels as (

    select labelled.* from {{ ref('stg_lara__prompt_labels') }} as labelled
    where labelled.prompt_id in (select prompts.prompt_id from prompts)

),

ranked as (

    select
        prompt_id,
        has_retrieval_intent,
        retrieval_intent_count,
        judge,
        judged_at,
        row_number() over (
            partition by prompt_id
            order by case when judge = 'human' then 0 else 1 end, judged_at desc
        ) as judgement_rank,
        count(*) over (partition by prompt_id) as judgement_count
    from labels

),

resolved as (

    select
        prompt_id,
        has_retrieval_intent,
        retrieval_intent_count,
        judge,
        judged_at,
        judgement_count
    from ranked
    where judgement_rank = 1

),

final as (

    select
        resolved.*,
        prompts.session_guid
    from resolved
    inner join prompts
        on resolved.prompt_id = prompts.prompt_id

)

{{ lara_stamp_rows('final') }}
