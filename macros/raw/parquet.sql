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


{#- Spark: one glob per table and partition set; Spark merges the files'
    schemas first (spark.sql.parquet.mergeSchema), so the column types are
    those of the merged schema, and files whose types disagree fail in that
    merge with both types named. `_source_line` is `_metadata.row_index + 1`
    (Spark 3.5+). -#}
{% macro spark__lara_raw_parquet_select(node, files_glob) %}
    {%- set by_name = {} -%}
    {%- for column in node.columns -%}{%- do by_name.update({column.name: column}) -%}{%- endfor -%}
    {#- A temporary view rather than `describe query ... parquet.<glob>`: a failed
        schema merge then reports the column and both types. One view name per
        table: base models run this in parallel threads of one Spark session. -#}
    {%- set schema_view = 'lara__raw_parquet_schema_' ~ node.name -%}
    {%- do run_query("create or replace temporary view " ~ schema_view ~ " using parquet"
        ~ " options (path " ~ lara_sql_string(files_glob) ~ ", mergeSchema 'true')") -%}
    {%- set types = {} -%}
    {%- for row in run_query("describe " ~ schema_view).rows if row[0] in by_name and row[0] not in types -%}
        {%- set column = by_name[row[0]] -%}
        {%- set actual = row[1] | string | lower -%}
        {%- set accepted = spark__lara_accepted_parquet_types(column.lara_type) -%}
        {%- if column.get('required') and actual not in accepted and actual.split('(')[0] not in accepted -%}
            {{ exceptions.raise_compiler_error(
                "lara: Parquet files '" ~ files_glob ~ "' have column '" ~ row[0] ~ "' of type "
                ~ row[1] ~ "; table '" ~ node.name ~ "' requires a " ~ column.lara_type
                ~ " (" ~ (accepted | join(', ')) ~ ")") }}
        {%- endif -%}
        {%- do types.update({row[0]: actual}) -%}
    {%- endfor %}
    select
        'parquet' as _source_format,
        regexp_replace(_metadata.file_path, '^file:', '') as _source_file,
        _metadata.row_index + 1 as _source_line,
        regexp_extract(_metadata.file_path, '/dt=([^/]*)/[^/]*$', 1) as _partition_value,
        true as _is_parseable,
        cast(null as string) as _raw_row,
        {%- for column in node.columns %}
        {%- set read = lara_value_from_parquet(column, types.get(column.name)) %}
        {{ read[0] }} as {{ column.name }},
        {{ read[1] }} as _invalid_{{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from parquet.{{ lara_spark_path(files_glob) }}
{% endmacro %}


{% macro spark__lara_accepted_parquet_types(lara_type) %}
    {#- Spark types (of the merged Parquet schema) accepted for a required
        column of each contract type. -#}
    {%- set integers = ['tinyint', 'smallint', 'int', 'bigint', 'decimal(20,0)'] -%}
    {%- set accepted = {
        'id': ['string'],
        'string': ['string'],
        'enum': ['string'],
        'timestamp': ['timestamp', 'timestamp_ntz', 'string'],
        'boolean': ['boolean'],
        'integer': integers + ['float', 'double', 'decimal'],
        'float': ['float', 'double', 'decimal'] + integers,
        'string_list': ['array<string>'],
    } -%}
    {{ return(accepted[lara_type]) }}
{% endmacro %}


{% macro lara_spark_path(path) %}
    {#- A path as a Spark SQL quoted identifier (`parquet.<path>`). -#}
    {{ return('`' ~ (path | replace('`', '``')) ~ '`') }}
{% endmacro %}
