{#
    Typed values of the raw views. Every contract column arrives in its
    contract type (id, string, enum: text; timestamp: UTC timestamp without
    time zone; boolean; integer: bigint; float: double; string_list: list of
    text) with a flag `_invalid_<column>`: a value was delivered but does not
    parse as that type (staging quarantines the row as invalid_timestamp,
    invalid_type or invalid_list). Parquet columns of an accepted type are
    read as they are typed; text (JSON Lines, or a Parquet column typed as
    text) is parsed here, once.
#}

{% macro lara_contract_sql_type(lara_type) %}
    {{ return(adapter.dispatch('lara_contract_sql_type', 'lara')(lara_type)) }}
{% endmacro %}

{% macro default__lara_contract_sql_type(lara_type) %}
    {{ return({
        'id': 'varchar', 'string': 'varchar', 'enum': 'varchar', 'timestamp': 'timestamp',
        'boolean': 'boolean', 'integer': 'bigint', 'float': 'double', 'string_list': 'varchar[]',
    }[lara_type]) }}
{% endmacro %}

{% macro spark__lara_contract_sql_type(lara_type) %}
    {{ return({
        'id': 'string', 'string': 'string', 'enum': 'string', 'timestamp': 'timestamp',
        'boolean': 'boolean', 'integer': 'bigint', 'float': 'double', 'string_list': 'array<string>',
    }[lara_type]) }}
{% endmacro %}


{% macro lara_type_can_fail(lara_type) %}
    {#- Types whose text can fail to parse (the others are text already). -#}
    {{ return(lara_type in ('timestamp', 'boolean', 'integer', 'float', 'string_list')) }}
{% endmacro %}


{% macro lara_value_from_text(lara_type, text) %}
    {#- The typed value of a text (null when it does not parse). An integer
        must be integral: 3 and 3.0 parse, 2.5 does not (a grade of 2.5 is
        an invalid value, not a 2). -#}
    {%- if lara_type in ('id', 'string', 'enum') -%}
        {{ return(text) }}
    {%- elif lara_type == 'timestamp' -%}
        {{ return(lara_parse_utc_timestamp(text)) }}
    {%- elif lara_type == 'boolean' -%}
        {{ return(lara_try_cast('lower(trim(' ~ text ~ '))', 'boolean')) }}
    {%- elif lara_type == 'integer' -%}
        {{ return(lara_integral(lara_try_cast(text, 'double'))) }}
    {%- elif lara_type == 'float' -%}
        {{ return(lara_try_cast(text, 'double')) }}
    {%- elif lara_type == 'string_list' -%}
        {{ return(lara_parse_string_list(text)) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("lara: unknown lara_type '" ~ lara_type ~ "'") }}
    {%- endif -%}
{% endmacro %}


{% macro lara_integral(number) -%}
    {#- A double as a bigint when it is a whole number in range, else null. -#}
    {{ return('case when ' ~ number ~ ' = floor(' ~ number ~ ') and abs(' ~ number ~ ') < 9.0e18 then cast('
        ~ number ~ ' as bigint) end') }}
{%- endmacro %}


{% macro lara_typed_text_columns(columns, text_prefix='_text_') %}
    {#- Select-list items over text columns `<text_prefix><column>`: every
        contract column typed, and its `_invalid_<column>` flag. -#}
    {%- set items = [] -%}
    {%- for column in columns -%}
        {%- set text = text_prefix ~ column.name -%}
        {%- set value = lara_value_from_text(column.lara_type, text) -%}
        {%- do items.append(value ~ ' as ' ~ column.name) -%}
        {%- if lara_type_can_fail(column.lara_type) -%}
            {%- do items.append('(' ~ text ~ ' is not null and ' ~ value ~ ' is null) as _invalid_' ~ column.name) -%}
        {%- else -%}
            {%- do items.append('false as _invalid_' ~ column.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(items | join(',\n        ')) }}
{% endmacro %}


{% macro lara_value_from_parquet(column, file_type) %}
    {{ return(adapter.dispatch('lara_value_from_parquet', 'lara')(column, file_type)) }}
{% endmacro %}

{% macro duckdb__lara_value_from_parquet(column, file_type) %}
    {#- (value, invalid) for a Parquet column of DuckDB type `file_type`
        (none: absent from the file). Accepted types are read as typed; any
        other type is read as its text and parsed. -#}
    {%- set name = column.name -%}
    {%- set lara_type = column.lara_type -%}
    {%- set sql_type = lara_contract_sql_type(lara_type) -%}
    {%- if file_type is none -%}
        {{ return(['cast(null as ' ~ sql_type ~ ')', 'false']) }}
    {%- endif -%}
    {%- set base_type = file_type.split('(')[0] -%}
    {%- set integers = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'HUGEINT'] -%}
    {%- set floats = ['FLOAT', 'DOUBLE', 'DECIMAL'] -%}
    {%- if lara_type in ('id', 'string', 'enum') and base_type == 'VARCHAR' -%}
        {{ return([name, 'false']) }}
    {%- elif lara_type == 'timestamp' and base_type == 'TIMESTAMP WITH TIME ZONE' -%}
        {{ return(["timezone('UTC', " ~ name ~ ")", 'false']) }}
    {%- elif lara_type == 'timestamp' and base_type in ('TIMESTAMP', 'TIMESTAMP_NS', 'TIMESTAMP_MS', 'TIMESTAMP_S') -%}
        {{ return(['cast(' ~ name ~ ' as timestamp)', 'false']) }}
    {%- elif lara_type == 'boolean' and base_type == 'BOOLEAN' -%}
        {{ return([name, 'false']) }}
    {%- elif lara_type == 'integer' and base_type in integers -%}
        {{ return(['cast(' ~ name ~ ' as bigint)', 'false']) }}
    {%- elif lara_type == 'integer' and base_type in floats -%}
        {%- set value = lara_integral('cast(' ~ name ~ ' as double)') -%}
        {{ return([value, '(' ~ name ~ ' is not null and ' ~ value ~ ' is null)']) }}
    {%- elif lara_type == 'float' and (base_type in floats or base_type in integers) -%}
        {{ return(['cast(' ~ name ~ ' as double)', 'false']) }}
    {%- elif lara_type == 'string_list' and base_type == 'VARCHAR[]' -%}
        {{ return([name, 'false']) }}
    {%- elif lara_type == 'string_list' and base_type.endswith('[]') -%}
        {{ return(['cast(' ~ name ~ ' as varchar[])', 'false']) }}
    {%- else -%}
        {%- set text = ('cast(to_json(' ~ name ~ ') as varchar)') if base_type.endswith('[]') else ('cast(' ~ name ~ ' as varchar)') -%}
        {%- set value = lara_value_from_text(lara_type, text) -%}
        {%- if lara_type_can_fail(lara_type) -%}
            {{ return([value, '(' ~ name ~ ' is not null and ' ~ value ~ ' is null)']) }}
        {%- else -%}
            {{ return([value, 'false']) }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{#- Spark: (value, invalid) for a Parquet column of the merged schema's type
    `file_type` (lower case; none: absent). -#}
{% macro spark__lara_value_from_parquet(column, file_type) %}
    {%- set name = column.name -%}
    {%- set lara_type = column.lara_type -%}
    {%- set sql_type = lara_contract_sql_type(lara_type) -%}
    {%- if file_type is none -%}
        {{ return(['cast(null as ' ~ sql_type ~ ')', 'false']) }}
    {%- endif -%}
    {%- set base_type = file_type.split('(')[0] -%}
    {%- set integers = ['tinyint', 'smallint', 'int', 'bigint'] -%}
    {%- set floats = ['float', 'double', 'decimal'] -%}
    {%- if lara_type in ('id', 'string', 'enum') and base_type == 'string' -%}
        {{ return([name, 'false']) }}
    {%- elif lara_type == 'timestamp' and base_type in ('timestamp', 'timestamp_ntz') -%}
        {#- The session time zone is UTC (profiles.yml): a timestamp is its UTC value. -#}
        {{ return(['cast(' ~ name ~ ' as timestamp)', 'false']) }}
    {%- elif lara_type == 'boolean' and base_type == 'boolean' -%}
        {{ return([name, 'false']) }}
    {%- elif lara_type == 'integer' and (base_type in integers or file_type == 'decimal(20,0)') -%}
        {{ return(['cast(' ~ name ~ ' as bigint)', 'false']) }}
    {%- elif lara_type == 'integer' and base_type in floats -%}
        {%- set value = lara_integral('cast(' ~ name ~ ' as double)') -%}
        {{ return([value, '(' ~ name ~ ' is not null and ' ~ value ~ ' is null)']) }}
    {%- elif lara_type == 'float' and (base_type in floats or base_type in integers) -%}
        {{ return(['cast(' ~ name ~ ' as double)', 'false']) }}
    {%- elif lara_type == 'string_list' and file_type == 'array<string>' -%}
        {{ return([name, 'false']) }}
    {%- else -%}
        {%- set text = ('to_json(' ~ name ~ ')') if file_type.startswith('array') or file_type.startswith('struct') or file_type.startswith('map') else ('cast(' ~ name ~ ' as string)') -%}
        {%- set value = lara_value_from_text(lara_type, text) -%}
        {%- if lara_type_can_fail(lara_type) -%}
            {{ return([value, '(' ~ name ~ ' is not null and ' ~ value ~ ' is null)']) }}
        {%- else -%}
            {{ return([value, 'false']) }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
