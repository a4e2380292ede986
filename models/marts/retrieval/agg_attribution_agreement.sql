{#- Agreement between temporal inference and lineage (metrics.md): over
    actions resolved by direct or placement that have a consumed_asset_id,
    the share for which rule 4 alone gives the same retrieval. Per day x
    surface x role of the credited retrieval and per method, with every
    roll-up ('all'). Synthetic actions are excluded and counted. -#}
{%- set dimensions = [
    ['retrieval_date', 'day'], ['surface', 'surface'], ['retrieval_role', 'role'], ['attribution_method', 'method']
] -%}

with

attributions as (

    select
        retrieval_id,
        attribution_method,
        is_cross_session,
        temporal_retrieval_id,
        is_temporal_agreement,
        is_synthetic
    from {{ ref('int_action_attributions') }}
    where
        attribution_method in ('direct', 'placement')
        and consumed_asset_id is not null

),

retrievals as (

    select
        retrieval_id,
        retrieval_date,
        surface,
        retrieval_role
    from {{ ref('int_retrievals_scoped') }}

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

aggregated as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        retrieval_date,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        {{ lara_rolled_up('attribution_method') }} as attribution_method,
        {{ lara_count_if('is_synthetic') }} as synthetic_action_count,
        {{ lara_count_if('not is_synthetic') }} as lineage_action_count,
        {{ lara_count_if('not is_synthetic and is_temporal_agreement') }} as agreeing_action_count,
        {{ lara_count_if('not is_synthetic and not is_temporal_agreement and temporal_retrieval_id is not null') }}
            as temporal_other_retrieval_action_count,
        {{ lara_count_if('not is_synthetic and temporal_retrieval_id is null') }} as temporal_no_retrieval_action_count,
        {{ lara_count_if('not is_synthetic and is_cross_session') }} as cross_session_action_count
    from joined
    group by {{ lara_cube(dimensions | map('first') | list) }}

),

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
        cross_session_action_count
    from aggregated

)

select * from final
