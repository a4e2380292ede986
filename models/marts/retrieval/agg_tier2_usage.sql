{#- Tier 2 (metrics.md): were the results used, per day x surface x role with
    every roll-up ('all'). Denominator of every rate: in-scope retrievals
    (not synthetic, not misrouted). Exclusions are counted. -#}
{%- set dimensions = [['retrieval_date', 'day'], ['surface', 'surface'], ['retrieval_role', 'role']] -%}
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

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        [
            'has_genuine_positive', 'has_agent_consumption', 'has_observable_failure',
            'has_reject_failure', 'has_research_failure', 'has_substitution_failure',
            'is_unobserved', 'has_downstream_correction',
        ],
        [['is_substitution_role', 'retrievals.retrieval_role in ' ~ lara_quoted_list(var('orf_substitution_roles'))]]
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
        {% for flag in flags -%}
        {{ lara_count_if('is_in_scope and (' ~ flag[1] ~ ')') }} as {{ flag[0] }}_retrieval_count,
        {% endfor -%}
        {{ lara_count_if('is_in_scope and is_substitution_role') }} as substitution_role_retrieval_count
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
        substitution_role_retrieval_count,
        {% for flag in flags -%}
        {{ flag[0] }}_retrieval_count,
        {{ lara_rate_columns(flag[0] ~ '_rate', flag[0] ~ '_retrieval_count', 'in_scope_retrieval_count') }},
        {% endfor -%}
        {# 1 - ORF, reported beside GPR and ACR (never as satisfaction). #}
        1.0 - {{ lara_rate('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate,
        1.0 - {{ lara_wilson_high('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate_ci_low,
        1.0 - {{ lara_wilson_low('observable_failure_retrieval_count', 'in_scope_retrieval_count') }}
            as one_minus_observable_failure_rate_ci_high
    from aggregated

)

select * from final
