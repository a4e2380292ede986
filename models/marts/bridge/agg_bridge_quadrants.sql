{#- The 2x2 table of normalised SRU x CTU per SRU variant (reader, proxy):
    document counts and shares of the variant's documents, every cell present
    (zero counts included), plus a `total` row per variant. Recomputed
    whole, with fct_document_utility: on runs that loaded replay documents
    only. -#}
{%- set replay_tables = ['replay_documents'] -%}
{{ lara_whole_table_config(replay_tables) }}

with

{{ lara_tables_this_run_cte(replay_tables) }}

document_utility as (

    select * from {{ ref('fct_document_utility') }}
    where {{ lara_if_tables_loaded() }}

),

sru_variants as (

    select 'reader' as sru_variant
    union all
    select 'proxy' as sru_variant

),

quadrants as (

    select
        'low_sru_high_ctu' as quadrant,
        'low' as sru_level,
        'high' as ctu_level
    union all
    select
        'high_sru_high_ctu' as quadrant,
        'high' as sru_level,
        'high' as ctu_level
    union all
    select
        'low_sru_low_ctu' as quadrant,
        'low' as sru_level,
        'low' as ctu_level
    union all
    select
        'high_sru_low_ctu' as quadrant,
        'high' as sru_level,
        'low' as ctu_level

),

{# One row per (variant, document) in the variant's population. #}
variant_documents as (

    select
        'reader' as sru_variant,
        bridge_quadrant as quadrant,
        is_failed_replay
    from document_utility
    where bridge_quadrant is not null
    union all
    select
        'proxy' as sru_variant,
        proxy_bridge_quadrant as quadrant,
        is_failed_replay
    from document_utility
    where proxy_bridge_quadrant is not null

),

cell_counts as (

    select
        sru_variant,
        quadrant,
        count(*) as document_count,
        count(case when is_failed_replay then 1 end) as failed_replay_count
    from variant_documents
    group by
        sru_variant,
        quadrant

),

cells as (

    select
        sru_variants.sru_variant,
        quadrants.quadrant,
        quadrants.sru_level,
        quadrants.ctu_level,
        coalesce(cell_counts.document_count, 0) as document_count,
        coalesce(cell_counts.failed_replay_count, 0) as failed_replay_count
    from sru_variants
    cross join quadrants
    left join cell_counts
        on
            sru_variants.sru_variant = cell_counts.sru_variant
            and quadrants.quadrant = cell_counts.quadrant

),

totals as (

    select
        sru_variant,
        'total' as quadrant,
        cast(null as {{ dbt.type_string() }}) as sru_level,
        cast(null as {{ dbt.type_string() }}) as ctu_level,
        cast(sum(document_count) as bigint) as document_count,
        cast(sum(failed_replay_count) as bigint) as failed_replay_count
    from cells
    group by sru_variant

),

cells_and_totals as (

    select * from cells
    union all
    select * from totals

),

final as (

    select
        -- ids
        cells_and_totals.sru_variant,
        cells_and_totals.quadrant,
        -- strings
        cells_and_totals.sru_level,
        cells_and_totals.ctu_level,
        -- numerics
        cells_and_totals.document_count,
        cells_and_totals.failed_replay_count,
        case
            when totals.document_count > 0
                then cast(cells_and_totals.document_count as double) / totals.document_count
        end as share,  -- noqa: RF04
        cast({{ var('bridge_tau_low') }} as double) as bridge_tau_low,
        cast({{ var('bridge_tau_high') }} as double) as bridge_tau_high,
        -- booleans
        cells_and_totals.quadrant = 'low_sru_high_ctu' as is_bridge_cell,
        -- bookkeeping
        {{ lara_run_started_at() }} as _lara_loaded_at
    from cells_and_totals
    inner join totals
        on cells_and_totals.sru_variant = totals.sru_variant
    {#- Its cells are rows even without documents: none on a run that keeps
        the table. #}
    where {{ lara_if_tables_loaded() }}

)

select * from final
