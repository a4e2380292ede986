{#- Agreement between temporal inference and lineage (metrics.md v2): over
    actions resolved by direct, or by placement with chain_root_method
    direct (lineage-backed only), that have a consumed_asset_id,
    the share for which rule 4 alone gives the same retrieval. Per day x
    surface x role of the credited retrieval and per method, with every
    roll-up ('all'). Synthetic actions are excluded and counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [
    ['surface', 'surface'], ['retrieval_role', 'role'], ['attribution_method', 'method']
] -%}
{{ lara_daily_config('retrieval_date') }}


with

{{ lara_days_this_run_cte() }}

attributions as (

    select
        retrieval_id,
        attribution_method,
        is_cross_session,
        temporal_retrieval_id,
        is_temporal_agreement,
        is_synthetic
    from {{ ref('int_action_attributions') }}
    -- The agreement population (metrics.md v2): direct, or placement with
    -- chain_root_method direct, with a consumed asset
    -- (int_action_attributions.is_temporal_agreement is set exactly there).
    where is_temporal_agreement is not null

),

retrievals as (

    select
        retrieval_id,
        retrieval_date,
        surface,
        retrieval_role
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_days_this_run('retrieval_date') }}

),

joined as (

    select
        retrievals.retrieval_date,
        retrievals.surface,
        retrievals.retrieval_role,
        attributions.attribution_method,
        attributions.is_synthetic,
        attributions.is_cross_session,
        attributions.temporal_retrieval_id,
        attributions.is_temporal_agreement
    from attributions
    inner join retrievals
        on attributions.retrieval_id = retrievals.retrieval_id

),

{{ lara_rollup(
    'aggregated',
    rows='joined',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['synthetic_action_count', lara_count_if('is_synthetic')],
        ['lineage_action_count', lara_count_if('not is_synthetic')],
        ['agreeing_action_count', lara_count_if('not is_synthetic and is_temporal_agreement')],
        ['temporal_other_retrieval_action_count',
            lara_count_if('not is_synthetic and not is_temporal_agreement and temporal_retrieval_id is not null')],
        ['temporal_no_retrieval_action_count', lara_count_if('not is_synthetic and temporal_retrieval_id is null')],
        ['cross_session_action_count', lara_count_if('not is_synthetic and is_cross_session')],
    ],
) }}

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        attribution_method,
        synthetic_action_count,
        lineage_action_count,
        agreeing_action_count,
        {{ lara_rate_columns('agreement_rate', 'agreeing_action_count', 'lineage_action_count') }},
        temporal_other_retrieval_action_count,
        temporal_no_retrieval_action_count,
        cross_session_action_count,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
