{#- Values from outside the project (paths, raw values) enter SQL text only
    through these helpers: the raw logs, their file and folder names, and the
    raw root are hostile (README, Threat model). -#}

{#- lara_sql_string(value): `value` as a SQL string literal, quotes escaped. -#}
{% macro lara_sql_string(value) %}
    {{ return(adapter.dispatch('lara_sql_string', 'lara')(value)) }}
{% endmacro %}

{% macro default__lara_sql_string(value) -%}
    {{ return("'" ~ (value | string | replace("'", "''")) ~ "'") }}
{%- endmacro %}

{#- Spark SQL string literals treat a backslash as an escape character. -#}
{% macro spark__lara_sql_string(value) -%}
    {{ return("'" ~ (value | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") }}
{%- endmacro %}


{#- lara_sql_string_list(values): a SQL list literal of strings, ['a', 'b']. -#}
{% macro lara_sql_string_list(values) -%}
    {%- set literals = [] -%}
    {%- for value in values -%}{%- do literals.append(lara_sql_string(value)) -%}{%- endfor -%}
    {{ return('[' ~ (literals | join(', ')) ~ ']') }}
{%- endmacro %}


{#- lara_sql_in_list(values): the parenthesised list of an `in` predicate;
    `(null)` (matches nothing) when empty. -#}
{% macro lara_sql_in_list(values) -%}
    {%- set literals = [] -%}
    {%- for value in values -%}{%- do literals.append(lara_sql_string(value)) -%}{%- endfor -%}
    {{ return('(' ~ ((literals | join(', ')) if literals else 'null') ~ ')') }}
{%- endmacro %}


{#- lara_glob_literal(path): a file path as a glob pattern that matches that
    one file: DuckDB reads every path it is given as a pattern, so a file
    named `a*.jsonl` would also read `ab.jsonl`. Each glob character becomes
    a one-character class (`*` -> `[*]`, `?` -> `[?]`, `[` -> `[[]`). -#}
{% macro lara_glob_literal(path) -%}
    {{ return(path | string | replace('[', '[[]') | replace('*', '[*]') | replace('?', '[?]')) }}
{%- endmacro %}
