with

base as (

    select * from {{ ref('base_lara__replay_documents') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        trajectory_id,
        question_id,
        doc_id,
        -- strings
        counterfactual_status,
        -- numerics
        step_index,
        reader_score_with,
        reader_score_without,
        proxy_score,
        answer_f1_original,
        answer_f1_counterfactual,
        next_recall_original,
        next_recall_counterfactual,
        turns_original,
        turns_counterfactual,
        -- booleans
        is_relevant,
        -- timestamps
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
