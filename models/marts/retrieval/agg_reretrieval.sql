{#- Re-retrieval before any outcome (metrics.md v2) per day x surface x role
    with every roll-up ('all') and the period totals: rate = in-scope
    retrievals with >= 1 returned asset that were re-retrieved (one of their
    assets returned again to the same user within var
    reretrieval_window_days, before any outcome of the user on it;
    fct_retrieval_reretrievals) / those retrievals. Dated by the first
    retrieval.

    Incremental by day with the window as lookback (strategy
    lara_replace_days, config lara_day_lookback), as fct_retrieval_reretrievals. -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{%- set window_days = var('reretrieval_window_days') | int -%}
{{ lara_daily_config('retrieval_date', lookback_days=window_days) }}

with

{{ lara_days_this_run_cte(lookback_days=window_days) }}

units as (

    select
        retrieval_date,
        surface,
        retrieval_role,
        has_known_user,
        is_reretrieved
    from {{ ref('fct_retrieval_reretrievals') }}
    where {{ lara_in_days_this_run('retrieval_date') }}

),

{{ lara_rollup(
    'aggregated',
    rows='units',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['retrieval_count', 'count(*)', {'stored_as': 'reretrieval_rate_denominator'}],
        ['unknown_user_retrieval_count', lara_count_if('not has_known_user')],
        ['reretrieved_retrieval_count', lara_count_if('is_reretrieved'), {'stored_as': 'reretrieval_rate_numerator'}],
    ],
) }}

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        is_period_total,
        {{ window_days }} as reretrieval_window_days,
        unknown_user_retrieval_count,
        {{ lara_rate_with_counts('reretrieval_rate', 'reretrieved_retrieval_count', 'retrieval_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
