{#- Reading Tier 1 and Tier 2 together (metrics.md): the diagnosis mix of
    labelled in-scope retrievals per day x surface x role with every roll-up
    ('all'). Exclusions are counted. -#}
{%- set dimensions = [['retrieval_date', 'day'], ['surface', 'surface'], ['retrieval_role', 'role']] -%}

with

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        ['tier_diagnosis']
    ) }}

),

aggregated as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        retrieval_date,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        count(*) as logged_retrieval_count,
        {{ lara_count_if('is_synthetic') }} as synthetic_retrieval_count,
        {{ lara_count_if('is_excluded_misrouted') }} as misrouted_retrieval_count,
        {{ lara_count_if('is_in_scope') }} as in_scope_retrieval_count,
        {% for diagnosis in lara_tier_diagnoses() -%}
        {{ lara_count_if("is_in_scope and tier_diagnosis = '" ~ diagnosis ~ "'") }} as {{ diagnosis }}_retrieval_count,
        {% endfor -%}
        {{ lara_count_if('is_in_scope and tier_diagnosis is not null') }} as labelled_retrieval_count
    from scoped
    group by {{ lara_cube(dimensions | map('first') | list) }}

),

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        logged_retrieval_count,
        synthetic_retrieval_count,
        misrouted_retrieval_count,
        in_scope_retrieval_count,
        labelled_retrieval_count,
        {% for diagnosis in lara_tier_diagnoses() -%}
        {{ diagnosis }}_retrieval_count,
        {{ lara_rate_columns(diagnosis ~ '_rate', diagnosis ~ '_retrieval_count', 'labelled_retrieval_count') }},
        {% endfor -%}
        {{ var('tier1_good_ndcg') }} as tier1_good_ndcg
    from aggregated

)

select * from final
