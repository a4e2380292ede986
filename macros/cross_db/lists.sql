{#- List operations (DuckDB lists, Spark arrays). -#}

{#- lara_duckdb_first_positions(list_expression, last_position_expression):
    DuckDB only, the rule of a de-duplicated list written once: the 1-based
    positions, up to `last_position_expression`, that hold an element's first
    occurrence in the list (an element whose first position is its own). Up
    to len(list) it lists the positions lara_explode_distinct_list keeps; up
    to an element's own first position, its length is the element's rank in
    the de-duplicated list (lara_distinct_list_rank). -#}
{% macro lara_duckdb_first_positions(list_expression, last_position_expression) -%}
    list_filter(
        range(1, {{ last_position_expression }} + 1),
        lambda position: list_position({{ list_expression }}, {{ list_expression }}[position]) = position
    )
{%- endmacro %}

{#- lara_explode_distinct_list(relation_sql, id_columns, list_column,
    element_alias, rank_alias, position_alias): one row per distinct element
    of a list, as trec_eval sees a ranked list: a repeated element keeps its
    first occurrence, `rank_alias` is its 1-based position in the
    de-duplicated list and `position_alias` its 1-based position in the
    list as logged. Empty and null lists give no rows. No sort or grouping:
    the list is de-duplicated in place. `relation_sql` is a CTE or relation. -#}
{% macro lara_explode_distinct_list(relation_sql, id_columns, list_column, element_alias, rank_alias, position_alias) %}
    {{ return(adapter.dispatch('lara_explode_distinct_list', 'lara')(relation_sql, id_columns, list_column, element_alias, rank_alias, position_alias)) }}
{% endmacro %}

{% macro duckdb__lara_explode_distinct_list(relation_sql, id_columns, list_column, element_alias, rank_alias, position_alias) -%}
    {#- The positions of first occurrences (an element whose first position
        is its own), then the elements at those positions. -#}
    select
        {% for column in id_columns -%}
        {{ column }},
        {% endfor -%}
        unnest(list_transform(lara_first_positions, lambda position: lara_logged_list[position])) as {{ element_alias }},
        cast(generate_subscripts(lara_first_positions, 1) as bigint) as {{ rank_alias }},
        cast(unnest(lara_first_positions) as bigint) as {{ position_alias }}
    from (
        select
            {% for column in id_columns -%}
            {{ column }},
            {% endfor -%}
            {{ list_column }} as lara_logged_list,
            {{ lara_duckdb_first_positions(list_column, 'len(' ~ list_column ~ ')') }} as lara_first_positions
        from {{ relation_sql }}
    ) as first_positions
{%- endmacro %}

{#- Spark: array_distinct keeps first occurrences in order. -#}
{% macro default__lara_explode_distinct_list(relation_sql, id_columns, list_column, element_alias, rank_alias, position_alias) -%}
    select
        {% for column in id_columns -%}
        {{ column }},
        {% endfor -%}
        exploded.{{ element_alias }},
        cast(exploded.lara_pos + 1 as bigint) as {{ rank_alias }},
        cast(array_position({{ list_column }}, exploded.{{ element_alias }}) as bigint) as {{ position_alias }}
    from {{ relation_sql }}
    lateral view posexplode(array_distinct({{ list_column }})) exploded as lara_pos, {{ element_alias }}
{%- endmacro %}

{#- lara_distinct_list_rank(list_expression, element_expression): the 1-based
    rank of an element in the de-duplicated list (repeated elements keep their
    first occurrence), the `rank_alias` lara_explode_distinct_list gives it,
    for one element without exploding the list; null when the element is
    null or not in the list, or the list is null. -#}
{% macro lara_distinct_list_rank(list_expression, element_expression) %}
    {{ return(adapter.dispatch('lara_distinct_list_rank', 'lara')(list_expression, element_expression)) }}
{% endmacro %}

{#- The first occurrences up to the element's own (as in
    lara_explode_distinct_list), counted. -#}
{% macro duckdb__lara_distinct_list_rank(list_expression, element_expression) -%}
    case
        when {{ element_expression }} is not null
            and list_position({{ list_expression }}, {{ element_expression }}) > 0
            then len({{ lara_duckdb_first_positions(
                list_expression, 'list_position(' ~ list_expression ~ ', ' ~ element_expression ~ ')'
            ) }})
    end
{%- endmacro %}

{#- Spark: array_distinct keeps first occurrences in order; array_position is
    1-based, 0 when absent. -#}
{% macro default__lara_distinct_list_rank(list_expression, element_expression) -%}
    case
        when {{ element_expression }} is not null
            then cast(nullif(array_position(array_distinct({{ list_expression }}), {{ element_expression }}), 0) as bigint)
    end
{%- endmacro %}

{#- lara_list_contains(list_expression, value_expression): null-safe membership. -#}
{% macro lara_list_contains(list_expression, value_expression) %}
    {{ return(adapter.dispatch('lara_list_contains', 'lara')(list_expression, value_expression)) }}
{% endmacro %}

{% macro duckdb__lara_list_contains(list_expression, value_expression) -%}
    coalesce(list_contains({{ list_expression }}, {{ value_expression }}), false)
{%- endmacro %}

{% macro default__lara_list_contains(list_expression, value_expression) -%}
    coalesce(array_contains({{ list_expression }}, {{ value_expression }}), false)
{%- endmacro %}


{#- Spark: posexplode; positions as bigint, as DuckDB's generate_subscripts. -#}

