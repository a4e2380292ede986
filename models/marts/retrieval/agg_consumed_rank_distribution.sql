{#- Where consumed assets sat (metrics.md consumed_rank): counts of
    non-synthetic attributed actions with a consumed asset per consumed rank
    (position in the returned list) x display position, by surface, role,
    actor and method with every roll-up ('all').

    Recomputed whole, on a run that loaded a row of any contract table only
    (lara_whole_table_config): a run with nothing new keeps the table. -#}
{%- set dimensions = [
    ['surface', 'surface'], ['retrieval_role', 'role'], ['actor', 'actor'], ['attribution_method', 'method']
] -%}
{%- set k = var('lara_k') -%}
{{ lara_whole_table_config() }}

with

{{ lara_tables_this_run_cte() }}

attributions as (

    select
        surface,
        retrieval_role,
        actor,
        attribution_method,
        consumed_rank,
        display_position,
        has_display_log
    from {{ ref('fct_action_attributions') }}
    where consumed_asset_id is not null and {{ lara_if_tables_loaded() }}

),

bucketed as (

    select
        surface,
        retrieval_role,
        actor,
        attribution_method,
        consumed_rank,
        display_position,
        case
            when consumed_rank is null then 'not_returned'
            when consumed_rank <= {{ k }} then 'top_k'
            else 'below_k'
        end as consumed_rank_band,
        case
            when not has_display_log then 'no_display_log'
            when display_position is null then 'not_displayed'
            else 'displayed'
        end as display_status
    from attributions

),

aggregated as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        {{ lara_rolled_up('actor') }} as actor,
        {{ lara_rolled_up('attribution_method') }} as attribution_method,
        consumed_rank,
        consumed_rank_band,
        display_position,
        display_status,
        count(*) as consumed_action_count
    from bucketed
    group by {{ lara_cube(
        dimensions | map('first') | list,
        fixed=['consumed_rank', 'consumed_rank_band', 'display_position', 'display_status']
    ) }}

),

grouped as (

    select
        *,
        cast(sum(consumed_action_count) over (
            partition by grouping_level, surface, retrieval_role, actor, attribution_method
        ) as bigint) as group_consumed_action_count
    from aggregated

),

final as (

    select
        grouping_level,
        surface,
        retrieval_role,
        actor,
        attribution_method,
        consumed_rank,
        consumed_rank_band,
        display_position,
        display_status,
        coalesce(consumed_rank = display_position, false) as is_rank_equal_to_display_position,
        consumed_action_count,
        group_consumed_action_count,
        {{ lara_rate_columns('share_of_group', 'consumed_action_count', 'group_consumed_action_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from grouped

)

select * from final
