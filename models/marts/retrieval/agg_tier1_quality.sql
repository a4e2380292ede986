{#- Tier 1 (metrics.md): retrieval quality at trigger time per day x surface
    x role with every roll-up ('all'), over in-scope retrievals (not
    synthetic, not misrouted). Exclusions are counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{{ lara_daily_config('retrieval_date') }}


with

{{ lara_days_this_run_cte() }}

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        ['is_empty', 'is_labelled', 'precision_at_1', 'precision_at_k', 'ndcg_at_k', 'label_coverage_at_k', 'is_tier1_good', 'is_displayed', 'click_count'],
        where=lara_in_days_this_run('retrievals.retrieval_date')
    ) }}

),

{{ lara_rollup(
    'aggregated',
    rows='scoped',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['logged_retrieval_count', 'count(*)'],
        ['synthetic_retrieval_count', lara_count_if('is_synthetic')],
        ['misrouted_retrieval_count', lara_count_if('is_excluded_misrouted')],
        ['in_scope_retrieval_count', lara_count_if('is_in_scope')],
        ['empty_retrieval_count', lara_count_if('is_in_scope and is_empty')],
        ['labelled_retrieval_count', lara_count_if('is_in_scope and is_labelled')],
        ['relevant_at_1_retrieval_count', lara_count_if('is_in_scope and is_labelled and precision_at_1 = 1')],
        ['precision_at_k_sum', 'coalesce(sum(case when is_in_scope then precision_at_k end), 0.0)', {'type': 'double'}],
        ['precision_at_k_sum_of_squares',
            'coalesce(sum(case when is_in_scope then precision_at_k * precision_at_k end), 0.0)', {'type': 'double'}],
        ['ndcg_at_k_sum', 'coalesce(sum(case when is_in_scope then ndcg_at_k end), 0.0)', {'type': 'double'}],
        ['ndcg_at_k_sum_of_squares',
            'coalesce(sum(case when is_in_scope then ndcg_at_k * ndcg_at_k end), 0.0)', {'type': 'double'}],
        ['label_coverage_at_k_sum',
            'coalesce(sum(case when is_in_scope then label_coverage_at_k end), 0.0)', {'type': 'double'}],
        ['label_coverage_at_k_count', lara_count_if('is_in_scope and label_coverage_at_k is not null')],
        ['tier1_good_retrieval_count', lara_count_if('is_in_scope and is_tier1_good')],
        ['displayed_retrieval_count', lara_count_if('is_in_scope and is_displayed')],
        ['clicked_retrieval_count', lara_count_if('is_in_scope and is_displayed and click_count > 0')],
        ['displayed_click_count',
            'cast(coalesce(sum(case when is_in_scope and is_displayed then click_count end), 0) as bigint)'],
    ],
) }}

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        {{ var('lara_k') }} as k,
        {{ var('relevant_grade_min') }} as relevant_grade_min,
        {{ var('tier1_good_ndcg') }} as tier1_good_ndcg,
        logged_retrieval_count,
        synthetic_retrieval_count,
        misrouted_retrieval_count,
        in_scope_retrieval_count,
        empty_retrieval_count,
        {{ lara_rate_columns('empty_result_rate', 'empty_retrieval_count', 'in_scope_retrieval_count') }},
        labelled_retrieval_count,
        {{ lara_rate_columns('label_sample_rate', 'labelled_retrieval_count', 'in_scope_retrieval_count') }},
        relevant_at_1_retrieval_count,
        {{ lara_rate_columns('precision_at_1_mean', 'relevant_at_1_retrieval_count', 'labelled_retrieval_count') }},
        precision_at_k_sum,
        precision_at_k_sum_of_squares,
        {{ lara_rate('precision_at_k_sum', 'labelled_retrieval_count') }} as precision_at_k_mean,
        {{ lara_mean_ci_low('precision_at_k_sum', 'precision_at_k_sum_of_squares', 'labelled_retrieval_count') }}
            as precision_at_k_mean_ci_low,
        {{ lara_mean_ci_high('precision_at_k_sum', 'precision_at_k_sum_of_squares', 'labelled_retrieval_count') }}
            as precision_at_k_mean_ci_high,
        ndcg_at_k_sum,
        ndcg_at_k_sum_of_squares,
        {{ lara_rate('ndcg_at_k_sum', 'labelled_retrieval_count') }} as ndcg_at_k_mean,
        {{ lara_mean_ci_low('ndcg_at_k_sum', 'ndcg_at_k_sum_of_squares', 'labelled_retrieval_count') }}
            as ndcg_at_k_mean_ci_low,
        {{ lara_mean_ci_high('ndcg_at_k_sum', 'ndcg_at_k_sum_of_squares', 'labelled_retrieval_count') }}
            as ndcg_at_k_mean_ci_high,
        label_coverage_at_k_sum,
        label_coverage_at_k_count,
        {{ lara_rate('label_coverage_at_k_sum', 'label_coverage_at_k_count') }} as label_coverage_at_k_mean,
        tier1_good_retrieval_count,
        {{ lara_rate_columns('tier1_good_rate', 'tier1_good_retrieval_count', 'labelled_retrieval_count') }},
        displayed_retrieval_count,
        clicked_retrieval_count,
        {{ lara_rate_columns('click_through_rate', 'clicked_retrieval_count', 'displayed_retrieval_count') }},
        displayed_click_count,
        {{ lara_rate('displayed_click_count', 'displayed_retrieval_count') }} as clicks_per_displayed_grid,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
