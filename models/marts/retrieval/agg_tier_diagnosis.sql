{#- Reading Tier 1 and Tier 2 together (metrics.md): the diagnosis mix of
    labelled in-scope retrievals per day x surface x role with every roll-up
    ('all'). Exclusions are counted.

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
        ['tier_diagnosis'],
        where=lara_in_days_this_run('retrievals.retrieval_date')
    ) }}

),

{%- set measures = [
    ['logged_retrieval_count', 'count(*)'],
    ['synthetic_retrieval_count', lara_count_if('is_synthetic')],
    ['misrouted_retrieval_count', lara_count_if('is_excluded_misrouted')],
    ['in_scope_retrieval_count', lara_count_if('is_in_scope')],
] -%}
{%- for diagnosis in lara_tier_diagnoses() -%}
    {%- do measures.append([diagnosis ~ '_retrieval_count',
        lara_count_if("is_in_scope and tier_diagnosis = '" ~ diagnosis ~ "'")]) -%}
{%- endfor -%}
{%- do measures.append(['labelled_retrieval_count', lara_count_if('is_in_scope and tier_diagnosis is not null')]) %}
{{ lara_rollup('aggregated', rows='scoped', day='retrieval_date', dimensions=dimensions, measures=measures) }}

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
        {{ var('tier1_good_ndcg') }} as tier1_good_ndcg,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
