{#- One grade per (retrieval, asset): a human judgement wins over an LLM one,
    the latest wins within a kind; equal times keep the higher grade so the
    choice is deterministic.

    Labels of logged retrievals only (a label whose retrieval is not, or not
    yet, logged is resolved once the retrieval arrives: its session is then
    recomputed). Session-grained and incremental (strategy
    lara_replace_sessions, the retrieval's session): a run recomputes the
    retrievals of lara_sessions_this_run, which holds every session with a
    newly loaded label. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid
    from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

labels as (

    select labelled.* from {{ ref('stg_lara__relevance_labels') }} as labelled
    where labelled.retrieval_id in (select retrievals.retrieval_id from retrievals)

),

ranked as (

    select
        retrieval_id,
        asset_id,
        grade,
        judge,
        judged_at,
        row_number() over (
            partition by retrieval_id, asset_id
            order by
                case when judge = 'human' then 0 else 1 end,
                judged_at desc,
                grade desc
        ) as judgement_rank,
        count(*) over (partition by retrieval_id, asset_id) as judgement_count
    from labels

),

resolved as (

    select
        retrieval_id,
        asset_id,
        grade,
        judge,
        judged_at,
        judgement_count
    from ranked
    where judgement_rank = 1

),

final as (

    select
        resolved.*,
        retrievals.session_guid
    from resolved
    inner join retrievals
        on resolved.retrieval_id = retrievals.retrieval_id

)

{{ lara_stamp_rows('final') }}
