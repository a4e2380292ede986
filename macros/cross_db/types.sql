{#- Cross-database type parsing. Every engine-specific expression of the
    project lives in an adapter.dispatch macro (default__/duckdb__/spark__). -#}

{% macro lara_parse_utc_timestamp(expression) %}
    {{ return(adapter.dispatch('lara_parse_utc_timestamp', 'lara')(expression)) }}
{% endmacro %}

{#- ISO-8601 text with `Z`, an offset or none (taken as UTC), or a Parquet
    timestamp rendered as text: a UTC timestamp without time zone; null when
    the text is not a timestamp. -#}
{% macro default__lara_parse_utc_timestamp(expression) -%}
    cast(to_utc_timestamp(try_cast({{ expression }} as timestamp), 'UTC') as timestamp)
{%- endmacro %}

{% macro duckdb__lara_parse_utc_timestamp(expression) -%}
    timezone('UTC', try_cast({{ expression }} as timestamptz))
{%- endmacro %}


{% macro lara_try_cast(expression, data_type) %}
    {{ return(adapter.dispatch('lara_try_cast', 'lara')(expression, data_type)) }}
{% endmacro %}

{% macro default__lara_try_cast(expression, data_type) -%}
    try_cast({{ expression }} as {{ data_type }})
{%- endmacro %}


{% macro lara_parse_string_list(expression) %}
    {{ return(adapter.dispatch('lara_parse_string_list', 'lara')(expression)) }}
{% endmacro %}

{#- JSON array text -> list of strings; null when the text is not an array. -#}
{% macro duckdb__lara_parse_string_list(expression) -%}
    case
        when json_valid({{ expression }}) and json_type({{ expression }}) = 'ARRAY'
            then from_json({{ expression }}, '["VARCHAR"]')
    end
{%- endmacro %}

{% macro default__lara_parse_string_list(expression) -%}
    from_json({{ expression }}, 'array<string>')
{%- endmacro %}


{% macro lara_list_has_blank(list_expression) %}
    {{ return(adapter.dispatch('lara_list_has_blank', 'lara')(list_expression)) }}
{% endmacro %}

{#- True when a list holds a null or a blank (empty or whitespace) string:
    an element that trim() leaves empty. trim() runs only on the elements
    whose first character it could remove (a space, a control character or
    a non-ASCII one: code point <= 32 or >= 127); an element starting with
    printable ASCII keeps that character, so it is not blank. The same answer
    as trimming every element (python/tests/test_staging.py checks every code
    point to U+30FF), at less than half the CPU: trimming each of the ~24 ids
    of every retrieval's two lists was 8 of the 29 CPU seconds of
    base_lara__retrievals' full build at 12M events. -#}
{% macro duckdb__lara_list_has_blank(list_expression) -%}
    coalesce(list_bool_or(list_transform({{ list_expression }}, lambda element: case
        when element is null or element = '' then true
        when unicode(element) <= 32 or unicode(element) >= 127 then trim(element) = ''
        else false
    end)), false)
{%- endmacro %}

{% macro default__lara_list_has_blank(list_expression) -%}
    exists({{ list_expression }}, element -> coalesce(trim(element), '') = '')
{%- endmacro %}


{% macro lara_list_length(list_expression) %}
    {{ return(adapter.dispatch('lara_list_length', 'lara')(list_expression)) }}
{% endmacro %}

{% macro duckdb__lara_list_length(list_expression) -%}
    len({{ list_expression }})
{%- endmacro %}

{% macro default__lara_list_length(list_expression) -%}
    size({{ list_expression }})
{%- endmacro %}


{% macro lara_row_hash(expressions) %}
    {{ return(adapter.dispatch('lara_row_hash', 'lara')(expressions)) }}
{% endmacro %}

{#- md5 over the values, nulls made distinct from empty strings. -#}
{% macro default__lara_row_hash(expressions) -%}
    md5(concat_ws('|'
    {%- for expression in expressions -%}
        , coalesce(cast({{ expression }} as varchar), '\u0000null')
    {%- endfor -%}
    ))
{%- endmacro %}

{% macro duckdb__lara_row_hash(expressions) -%}
    md5(concat_ws(chr(31)
    {%- for expression in expressions -%}
        , coalesce(cast({{ expression }} as varchar), chr(0))
    {%- endfor -%}
    ))
{%- endmacro %}


{#- A 64-bit hash of one or more column expressions (any types; equal values
    give equal hashes, nulls included), as an integer: a narrow grouping key
    for checks over many rows (unique_combination_of_columns). Unlike
    lara_row_hash (an md5 text: equal hashes mean equal values), two
    different values can share it, so a caller confirms on the columns. -#}
{% macro lara_hash64(expressions) %}
    {{ return(adapter.dispatch('lara_hash64', 'lara')(expressions)) }}
{% endmacro %}

{% macro duckdb__lara_hash64(expressions) -%}
    hash({{ expressions | join(', ') }})
{%- endmacro %}

{% macro default__lara_hash64(expressions) -%}
    xxhash64({{ expressions | join(', ') }})
{%- endmacro %}

{#- Spark: try_cast accepts the same boolean and date texts as DuckDB; a cast
    to an integer type rounds half away from zero as DuckDB does (Spark's
    own cast truncates). -#}
{% macro spark__lara_try_cast(expression, data_type) -%}
    {%- if data_type | lower in ('bigint', 'integer', 'int') -%}
    try_cast(round(try_cast({{ expression }} as double)) as {{ data_type }})
    {%- else -%}
    try_cast({{ expression }} as {{ data_type }})
    {%- endif -%}
{%- endmacro %}

{#- Spark: JSON array text -> array<string>; null when the text is not an array. -#}
{% macro spark__lara_parse_string_list(expression) -%}
    case
        when left(ltrim({{ expression }}), 1) = '['
            then from_json({{ expression }}, 'array<string>')
    end
{%- endmacro %}

{% macro spark__lara_row_hash(expressions) -%}
    md5(concat_ws(chr(31)
    {%- for expression in expressions -%}
        , coalesce(cast({{ expression }} as string), chr(0))
    {%- endfor -%}
    ))
{%- endmacro %}


{#- Spark: size(null) is -1 unless spark.sql.legacy.sizeOfNull is false; null as in DuckDB. -#}
{% macro spark__lara_list_length(list_expression) -%}
    case when {{ list_expression }} is not null then cast(size({{ list_expression }}) as bigint) end
{%- endmacro %}


{#- lara_days_between(start_date, end_date): whole days from start to end
    (negative when end is earlier). -#}
{% macro lara_days_between(start_date, end_date) %}
    {{ return(adapter.dispatch('lara_days_between', 'lara')(start_date, end_date)) }}
{% endmacro %}

{% macro default__lara_days_between(start_date, end_date) -%}
    date_diff('day', {{ start_date }}, {{ end_date }})
{%- endmacro %}

{% macro spark__lara_days_between(start_date, end_date) -%}
    datediff({{ end_date }}, {{ start_date }})
{%- endmacro %}


{#- lara_add_days(date, days): the date `days` (an integer expression,
    negative goes back) days later, as a date. -#}
{% macro lara_add_days(date, days) %}
    {{ return(adapter.dispatch('lara_add_days', 'lara')(date, days)) }}
{% endmacro %}

{% macro default__lara_add_days(date, days) -%}
    cast({{ date }} + cast({{ days }} as integer) as date)
{%- endmacro %}

{% macro spark__lara_add_days(date, days) -%}
    date_add({{ date }}, cast({{ days }} as int))
{%- endmacro %}
