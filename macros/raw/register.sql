{#
    Registers one view per log-contract table over its readable data files,
    so that `source('lara_raw', <table>)` reads
    `$LARA_RAW_PATH/<table>/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz`.
    Runs as an on-run-start hook, after the listing (macros/raw/listing.sql).

    Every view has the same shape, whatever the file format:
        _source_format     'parquet' or 'jsonl'
        _source_file       path of the file the row came from
        _source_line       1-based line (JSON Lines) or row (Parquet) in that file
        _partition_value   the `dt=` value of the partition folder
        _is_parseable      false when a JSON line is not a JSON object
        _raw_row           the JSON line as delivered (null for Parquet rows)
        <column>           every contract column in its contract type
        _invalid_<column>  the value was delivered but does not parse as its type

    - A required table with no data file stops the build with the path looked at.
    - An optional table with no files becomes an empty view with the columns.
    - Files that cannot be data are skipped, listed and reported (listing.sql).
#}
{% macro lara_register_raw_sources() %}
    {{ return(adapter.dispatch('lara_register_raw_sources', 'lara')()) }}
{% endmacro %}


{% macro default__lara_register_raw_sources() %}
    {{ exceptions.raise_compiler_error(
        "lara: registering raw log files is not implemented for adapter '"
        ~ adapter.type() ~ "'") }}
{% endmacro %}


{% macro lara_list_raw_files() %}
    {{ return(adapter.dispatch('lara_list_raw_files', 'lara')()) }}
{% endmacro %}


{% macro duckdb__lara_register_raw_sources() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set raw_schema = var('lara_raw_schema', 'lara_raw') -%}
    {%- do run_query('create schema if not exists ' ~ raw_schema) -%}
    {%- do lara_list_raw_files() -%}
    {%- set statements = [] -%}
    {%- for node in lara_contract_tables() -%}
        {%- set files = lara_raw_data_files(node.name) -%}
        {%- do lara_require_files(node, files) -%}
        {%- do statements.append('create or replace view ' ~ raw_schema ~ '.' ~ node.name ~ ' as\n'
            ~ lara_raw_union_select(node, files.parquet, files.json)) -%}
        {%- do log('lara: ' ~ node.name ~ ': ' ~ (files.parquet | length) ~ ' parquet, '
            ~ (files.json | length) ~ ' json lines file(s)', info=false) -%}
    {%- endfor -%}
    {{ return(statements | join(';\n') ~ ';') }}
{% endmacro %}


{% macro lara_require_files(node, files) %}
    {%- if node.required_table and not files.parquet and not files.json -%}
        {{ exceptions.raise_compiler_error(
            "lara: required table '" ~ node.name ~ "' has no readable data files: looked for "
            ~ lara_raw_root() ~ "/" ~ node.name ~ "/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz"
            ~ " (set LARA_RAW_PATH to the folder that holds the log tables; skipped files are listed in "
            ~ lara_raw_listing_relation() ~ ")") }}
    {%- endif -%}
{% endmacro %}


{% macro lara_raw_union_select(node, parquet_files, json_files) %}
    {%- set parts = [] -%}
    {%- if parquet_files -%}
        {%- do parts.append(lara_raw_parquet_select(node, parquet_files)) -%}
    {%- endif -%}
    {%- if json_files -%}
        {%- do parts.append(lara_raw_json_select(node, json_files)) -%}
    {%- endif -%}
    {%- if not parts -%}
        {%- do parts.append(lara_raw_empty_select(node)) -%}
    {%- endif -%}
    {{ return(parts | join('\nunion all\n')) }}
{% endmacro %}


{% macro lara_raw_empty_select(node) %}
    select
        cast(null as {{ dbt.type_string() }}) as _source_format,
        cast(null as {{ dbt.type_string() }}) as _source_file,
        cast(null as bigint) as _source_line,
        cast(null as {{ dbt.type_string() }}) as _partition_value,
        cast(null as boolean) as _is_parseable,
        cast(null as {{ dbt.type_string() }}) as _raw_row,
        {%- for column in node.columns %}
        cast(null as {{ lara_contract_sql_type(column.lara_type) }}) as {{ column.name }},
        cast(null as boolean) as _invalid_{{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    where false
{% endmacro %}


{#- Spark: the same views over path globs (every dt= folder of a table, per
    format); dbt-spark runs a hook as one statement, so they run here. -#}
{% macro spark__lara_register_raw_sources() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set raw_schema = var('lara_raw_schema', 'lara_raw') -%}
    {%- do run_query('set spark.sql.parquet.mergeSchema=true') -%}
    {%- do run_query('create schema if not exists ' ~ raw_schema) -%}
    {%- do lara_list_raw_files() -%}
    {%- for node in lara_contract_tables() -%}
        {%- set files = lara_raw_data_files(node.name) -%}
        {%- do lara_require_files(node, files) -%}
        {%- do run_query('create or replace view ' ~ raw_schema ~ '.' ~ node.name ~ ' as\n'
            ~ spark__lara_raw_partitions_select(node, files.parquet, files.json, none)) -%}
    {%- endfor -%}
    {{ return('select 1') }}
{% endmacro %}
