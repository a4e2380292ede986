{#- One row per retrieval: Tier 1 quality at trigger time (metrics.md) from
    the resolved relevance labels. Quality metrics are null where the
    retrieval has no relevance label.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

{%- set k = var('lara_k') %}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

retrieval_assets as (

    select
        retrieval_id,
        asset_id,
        asset_rank
    from {{ ref('int_retrieval_assets') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

labels as (

    select
        retrieval_id,
        asset_id,
        grade
    from {{ ref('int_relevance_labels_resolved') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrieval_id from retrievals)
    {%- endif %}

),

labelled_retrievals as (

    select
        retrieval_id,
        count(*) as judged_asset_count
    from labels
    group by retrieval_id

),

returned_counts as (

    select
        retrieval_id,
        count(*) as distinct_returned_count
    from retrieval_assets
    group by retrieval_id

),

{# Returned assets of labelled retrievals with their grade (null = unjudged). #}
graded_ranks as (

    select
        retrieval_assets.retrieval_id,
        retrieval_assets.asset_rank,
        labels.grade
    from retrieval_assets
    inner join labelled_retrievals
        on retrieval_assets.retrieval_id = labelled_retrievals.retrieval_id
    left join labels
        on
            retrieval_assets.retrieval_id = labels.retrieval_id
            and retrieval_assets.asset_id = labels.asset_id

),

returned_scores as (

    select
        retrieval_id,
        {{ lara_precision_at_k('asset_rank', 'grade', 1) }} as precision_at_1,
        {{ lara_precision_at_k('asset_rank', 'grade', k) }} as precision_at_k,
        {{ lara_dcg_at_k('asset_rank', 'grade', k) }} as dcg_at_k,
        sum(case when asset_rank <= {{ k }} and grade is not null then 1 else 0 end) as judged_in_top_k_count
    from graded_ranks
    group by retrieval_id

),

{# Every judged grade of the retrieval, returned or not, best first. #}
ideal_ranks as (

    select
        retrieval_id,
        grade,
        row_number() over (partition by retrieval_id order by grade desc, asset_id asc) as ideal_rank
    from labels

),

ideal_scores as (

    select
        retrieval_id,
        {{ lara_dcg_at_k('ideal_rank', 'grade', k) }} as ideal_dcg_at_k
    from ideal_ranks
    group by retrieval_id

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        labelled_retrievals.retrieval_id is not null as is_labelled,
        coalesce(labelled_retrievals.judged_asset_count, 0) as judged_asset_count,
        coalesce(returned_counts.distinct_returned_count, 0) as distinct_returned_count,
        case
            when labelled_retrievals.retrieval_id is not null
                then coalesce(returned_scores.precision_at_1, 0.0)
        end as precision_at_1,
        case
            when labelled_retrievals.retrieval_id is not null
                then coalesce(returned_scores.precision_at_k, 0.0)
        end as precision_at_k,
        case
            when labelled_retrievals.retrieval_id is not null
                then coalesce(returned_scores.dcg_at_k, 0.0)
        end as dcg_at_k,
        ideal_scores.ideal_dcg_at_k,
        case
            when labelled_retrievals.retrieval_id is not null
                then {{ lara_ndcg('returned_scores.dcg_at_k', 'ideal_scores.ideal_dcg_at_k') }}
        end as ndcg_at_k,
        case
            when labelled_retrievals.retrieval_id is not null and returned_counts.distinct_returned_count > 0
                then
                    cast(returned_scores.judged_in_top_k_count as double)
                    / least(returned_counts.distinct_returned_count, {{ k }})
        end as label_coverage_at_k
    from retrievals
    left join labelled_retrievals
        on retrievals.retrieval_id = labelled_retrievals.retrieval_id
    left join returned_counts
        on retrievals.retrieval_id = returned_counts.retrieval_id
    left join returned_scores
        on retrievals.retrieval_id = returned_scores.retrieval_id
    left join ideal_scores
        on retrievals.retrieval_id = ideal_scores.retrieval_id

)

{{ lara_stamp_rows('final') }}
