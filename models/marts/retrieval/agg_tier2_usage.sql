{#- Tier 2 (metrics.md): were the results used, per day x surface x role with
    every roll-up ('all'). Denominator of every rate: in-scope retrievals
    (not synthetic, not misrouted), except agent_consumption_confirmed_rate
    (v2), over in-scope ACR retrievals. Exclusions are counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{{ lara_daily_config('retrieval_date') }}

{%- set flags = [
    ['genuine_positive', 'has_genuine_positive'],
    ['agent_consumption', 'has_agent_consumption'],
    ['used', 'has_genuine_positive or has_agent_consumption'],
    ['observable_failure', 'has_observable_failure'],
    ['reject_failure', 'has_reject_failure'],
    ['research_failure', 'has_research_failure'],
    ['substitution_failure', 'has_substitution_failure'],
    ['unobserved', 'is_unobserved'],
    ['downstream_correction', 'has_downstream_correction'],
] -%}

with

{{ lara_days_this_run_cte() }}

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        [
            'has_genuine_positive', 'has_agent_consumption', 'has_observable_failure',
            'has_reject_failure', 'has_research_failure', 'has_substitution_failure',
            'is_unobserved', 'has_downstream_correction', 'has_confirmed_agent_consumption',
        ],
        [['is_substitution_role', 'retrievals.retrieval_role in ' ~ lara_quoted_list(var('orf_substitution_roles'))]],
        where=lara_in_days_this_run('retrievals.retrieval_date')
    ) }}

),

{%- set measures = [
    ['logged_retrieval_count', 'count(*)'],
    ['synthetic_retrieval_count', lara_count_if('is_synthetic')],
    ['misrouted_retrieval_count', lara_count_if('is_excluded_misrouted')],
    ['in_scope_retrieval_count', lara_count_if('is_in_scope')],
] -%}
{%- for flag in flags -%}
{%- do measures.append([flag[0] ~ '_retrieval_count', lara_count_if('is_in_scope and (' ~ flag[1] ~ ')')]) -%}
{%- endfor -%}
{%- do measures.append(['substitution_role_retrieval_count', lara_count_if('is_in_scope and is_substitution_role')]) -%}
{%- do measures.append(['confirmed_agent_consumption_retrieval_count',
    lara_count_if('is_in_scope and has_confirmed_agent_consumption')]) %}
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
        substitution_role_retrieval_count,
        {% for flag in flags -%}
        {{ flag[0] }}_retrieval_count,
        {{ lara_rate_columns(flag[0] ~ '_rate', flag[0] ~ '_retrieval_count', 'in_scope_retrieval_count') }},
        {% endfor -%}
        {# Agent consumption confirmed by a later user action (metrics.md v2):
           over ACR retrievals, not over all retrievals. #}
        confirmed_agent_consumption_retrieval_count,
        {{ lara_rate_columns(
            'agent_consumption_confirmed_rate',
            'confirmed_agent_consumption_retrieval_count',
            'agent_consumption_retrieval_count'
        ) }},
        {# 1 - ORF, reported beside GPR and ACR (never as satisfaction). #}
        1.0 - {{ lara_rate('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate,
        1.0 - {{ lara_wilson_high('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate_ci_low,
        1.0 - {{ lara_wilson_low('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate_ci_high,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
