{#- Fails with every row for which one of `expressions` is not true (null
    fails too), named in `failed_expressions` (the failing expressions'
    texts, comma-separated) before the row's columns. One scan of the model
    checks every rule, where an `expression_is_true` test per rule costs a
    query (and a dbt node) each. -#}
{% test expressions_are_true(model, expressions) %}

select
    concat_ws(
        ', ',
        {%- for expression in expressions %}
        case when not coalesce({{ expression }}, false) then {{ lara_sql_string(expression.split() | join(' ')) }} end{{ ',' if not loop.last }}
        {%- endfor %}
    ) as failed_expressions,
    *
from {{ model }}
where
    {%- for expression in expressions %}
    {{ 'or ' if not loop.first }}not coalesce({{ expression }}, false)
    {%- endfor %}

{% endtest %}
