{#- Helpers of the bridge-evidence marts (models/marts/bridge). Proved by the
    unit tests of fct_document_utility and fct_entity_observations. -#}

{#- lara_mid_rank_percentile(value_expression, population_expression):
    mid-rank percentile of a value among the rows where population_expression
    is true: (values strictly below + half the values equal, itself included)
    / n. Null outside the population. The population expression must imply a
    non-null value. Standard window SQL (DuckDB and Spark alike), so not
    dispatched. -#}
{% macro lara_mid_rank_percentile(value_expression, population_expression) -%}
    case
        when {{ population_expression }}
            then (
                cast(rank() over (
                    partition by {{ population_expression }}
                    order by {{ value_expression }}
                ) - 1 as double)
                + 0.5 * count(*) over (
                    partition by {{ population_expression }}, {{ value_expression }}
                )
            ) / count(*) over (partition by {{ population_expression }})
    end
{%- endmacro %}


{#- lara_contains_text(text_expression, fragment_expression): true when the
    fragment occurs in the text (case-sensitive: lower-case both sides first
    for a case-insensitive test); null when either side is null. -#}
{% macro lara_contains_text(text_expression, fragment_expression) %}
    {{ return(adapter.dispatch('lara_contains_text', 'lara')(text_expression, fragment_expression)) }}
{% endmacro %}

{% macro duckdb__lara_contains_text(text_expression, fragment_expression) -%}
    contains({{ text_expression }}, {{ fragment_expression }})
{%- endmacro %}

{% macro default__lara_contains_text(text_expression, fragment_expression) -%}
    instr({{ text_expression }}, {{ fragment_expression }}) > 0
{%- endmacro %}
