{#- lara_quoted_list(values): a parenthesised list of quoted SQL string
    literals for `in`, e.g. ('find', 'operate') from a list var; ('') when
    the list is empty so the predicate is valid and matches nothing real. -#}
{% macro lara_quoted_list(values) -%}
    {%- if values | length == 0 -%}
        ('')
    {%- else -%}
        ({% for value in values %}'{{ value | replace("'", "''") }}'{{ ', ' if not loop.last }}{% endfor %})
    {%- endif -%}
{%- endmacro %}
