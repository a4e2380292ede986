{#- One prompt label per prompt: a human judgement wins over an LLM one, the
    latest wins within a kind. -#}
with

labels as (

    select * from {{ ref('stg_lara__prompt_labels') }}

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

)

select * from resolved
