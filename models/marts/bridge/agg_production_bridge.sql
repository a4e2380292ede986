{#- Share of bridge retrievals (fct_retrieval_bridge) per day x surface x
    role of the retrieval, with every roll-up ('all', null day). Population:
    labelled in-scope retrievals; in-scope retrievals are counted beside
    them to show how much of the traffic the figures rest on.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{{ lara_daily_config('retrieval_date') }}


with

{{ lara_days_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        retrieval_date,
        surface,
        retrieval_role
    from {{ ref('fct_retrievals') }}
    where is_in_tier_scope and {{ lara_in_days_this_run('retrieval_date') }}

),

retrieval_bridge as (

    select * from {{ ref('fct_retrieval_bridge') }}

),

scoped as (

    select
        retrievals.retrieval_date,
        retrievals.surface,
        retrievals.retrieval_role,
        retrieval_bridge.retrieval_id is not null as is_labelled,
        coalesce(retrieval_bridge.is_low_quality, false) as is_low_quality,
        coalesce(retrieval_bridge.is_used, false) as is_used,
        coalesce(retrieval_bridge.has_outcome, false) as has_outcome,
        coalesce(retrieval_bridge.is_followed_by_successful_retrieval, false) as is_followed_by_successful_retrieval,
        coalesce(retrieval_bridge.is_bridge_retrieval, false) as is_bridge_retrieval
    from retrievals
    left join retrieval_bridge
        on retrievals.retrieval_id = retrieval_bridge.retrieval_id

),

{{ lara_rollup(
    'aggregated',
    rows='scoped',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['in_scope_retrieval_count', 'count(*)'],
        ['labelled_retrieval_count', lara_count_if('is_labelled')],
        ['low_quality_retrieval_count', lara_count_if('is_low_quality')],
        ['used_retrieval_count', lara_count_if('is_labelled and is_used')],
        ['outcome_retrieval_count', lara_count_if('is_labelled and has_outcome')],
        ['low_quality_used_retrieval_count', lara_count_if('is_low_quality and is_used')],
        ['low_quality_followed_retrieval_count', lara_count_if('is_low_quality and is_followed_by_successful_retrieval')],
        ['bridge_retrieval_count', lara_count_if('is_bridge_retrieval')],
    ],
) }}

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        cast({{ var('tier1_good_ndcg') }} as double) as tier1_good_ndcg,
        in_scope_retrieval_count,
        labelled_retrieval_count,
        {{ lara_rate_columns('label_sample_rate', 'labelled_retrieval_count', 'in_scope_retrieval_count') }},
        low_quality_retrieval_count,
        {{ lara_rate_columns('low_quality_rate', 'low_quality_retrieval_count', 'labelled_retrieval_count') }},
        used_retrieval_count,
        {{ lara_rate_columns('used_rate', 'used_retrieval_count', 'labelled_retrieval_count') }},
        outcome_retrieval_count,
        {{ lara_rate_columns('outcome_rate', 'outcome_retrieval_count', 'labelled_retrieval_count') }},
        low_quality_used_retrieval_count,
        low_quality_followed_retrieval_count,
        bridge_retrieval_count,
        {{ lara_rate_columns('bridge_retrieval_share', 'bridge_retrieval_count', 'labelled_retrieval_count') }},
        {{ lara_rate_columns(
            'bridge_share_of_low_quality', 'bridge_retrieval_count', 'low_quality_retrieval_count'
        ) }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
