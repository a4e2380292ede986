{#
    Parquet files as rows of a raw view: contract columns read in their
    Parquet types (macros/raw/typed_values.sql), with the file, the row
    number in it (`_source_line`, 1-based) and the partition. No text
    rendering of the row: staging builds `_raw_row` only for the rows it
    quarantines. Files are read in groups of identical column types, so a
    file that types a column differently from the others is still read as
    its own types.
#}

{% macro lara_raw_parquet_select(node, files) %}
    {{ return(adapter.dispatch('lara_raw_parquet_select', 'lara')(node, files)) }}
{% endmacro %}


{% macro duckdb__lara_raw_parquet_select(node, files) %}
    {%- set types_of = {} -%}
    {%- set names = node.columns | map(attribute='name') | list -%}
    {%- set query -%}
        select source_file, column_name, column_type from {{ lara_raw_listing_relation('raw_file_columns') }}
        where source_file in {{ lara_sql_in_list(files) }} and column_name in {{ lara_sql_in_list(names) }}
    {%- endset -%}
    {%- for row in run_query(query).rows -%}
        {%- if row[0] not in types_of -%}{%- do types_of.update({row[0]: {}}) -%}{%- endif -%}
        {%- do types_of[row[0]].update({row[1]: row[2]}) -%}
    {%- endfor -%}
    {#- Group the files by their column types. -#}
    {%- set groups = {} -%}
    {%- set signatures = [] -%}
    {%- for path in files -%}
        {%- set types = types_of.get(path, {}) -%}
        {%- set signature = [] -%}
        {%- for name in names -%}{%- do signature.append(name ~ '=' ~ types.get(name, '')) -%}{%- endfor -%}
        {%- set signature = signature | join(';') -%}
        {%- if signature not in groups -%}
            {%- do groups.update({signature: {'types': types, 'files': []}}) -%}
            {%- do signatures.append(signature) -%}
        {%- endif -%}
        {%- do groups[signature].files.append(path) -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- for signature in signatures -%}
        {%- do parts.append(duckdb__lara_raw_parquet_group_select(node, groups[signature].files, groups[signature].types)) -%}
    {%- endfor -%}
    {{ return(parts | join('\nunion all\n')) }}
{% endmacro %}


{% macro duckdb__lara_raw_parquet_group_select(node, files, types) %}
    {%- set globs = [] -%}
    {%- for path in files -%}{%- do globs.append(lara_glob_literal(path)) -%}{%- endfor %}
    select
        'parquet' as _source_format,
        filename as _source_file,
        file_row_number + 1 as _source_line,
        regexp_extract(filename, '/dt=([^/]*)/[^/]*$', 1) as _partition_value,
        true as _is_parseable,
        cast(null as varchar) as _raw_row,
        {%- for column in node.columns %}
        {%- set read = lara_value_from_parquet(column, types.get(column.name)) %}
        {{ read[0] }} as {{ column.name }},
        {{ read[1] }} as _invalid_{{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from read_parquet(
        {{ lara_sql_string_list(globs) }},
        union_by_name = true,
        filename = true,
        file_row_number = true,
        hive_partitioning = false
    )
{% endmacro %}
