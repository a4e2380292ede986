{#- One grade per (retrieval, asset): a human judgement wins over an LLM one,
    the latest wins within a kind; equal times keep the higher grade so the
    choice is deterministic. -#}
with

labels as (

    select * from {{ ref('stg_lara__relevance_labels') }}

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

)

select * from resolved
