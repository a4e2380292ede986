{#
    Registers one view per log-contract table over the raw files, so that
    `source('lara_raw', <table>)` reads
    `$LARA_RAW_PATH/<table>/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz`.

    Runs as an on-run-start hook. Every registered view has the same shape,
    whatever the file format:
        _source_format   'parquet' or 'jsonl'
        _source_file     path of the file the row came from
        _source_line     1-based line (JSON Lines) or row (Parquet) in that file
        _partition_value the `dt=` value of the Hive partition folder
        _is_parseable    false when a JSON line is not a JSON object
        _raw_row         the row as delivered (JSON text)
        <column>         every contract column, as text (lists as JSON arrays)

    - A required table with no files stops the build with the path looked at.
    - An optional table with no files becomes an empty view with the columns.
    - A Parquet file whose required column has the wrong type stops the build
      with the file and the column named.
    - Files other than *.parquet, *.jsonl, *.jsonl.gz stop the build, except
      hidden or `_`-prefixed files (`_SUCCESS`, `.crc`), which are ignored.
#}
{% macro lara_register_raw_sources() %}
    {{ return(adapter.dispatch('lara_register_raw_sources', 'lara')()) }}
{% endmacro %}


{% macro lara_raw_root() %}
    {%- set root = var('lara_raw_path') | string -%}
    {{ return(root.rstrip('/')) }}
{% endmacro %}


{% macro lara_contract_tables() %}
    {#- The contract tables as {name, required_table, key, columns}. -#}
    {%- set tables = [] -%}
    {%- for name, spec in lara_contract().items() -%}
        {%- do tables.append({'name': name, 'required_table': spec.required_table,
            'key': spec.key, 'columns': spec.columns}) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}


{% macro default__lara_register_raw_sources() %}
    {{ exceptions.raise_compiler_error(
        "lara: registering raw log files is not implemented for adapter '"
        ~ adapter.type() ~ "'") }}
{% endmacro %}


{% macro duckdb__lara_register_raw_sources() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set root = lara_raw_root() -%}
    {%- set raw_schema = var('lara_raw_schema', 'lara_raw') -%}
    {%- set statements = ['create schema if not exists ' ~ raw_schema] -%}
    {%- set listing = [] -%}
    {%- for node in lara_contract_tables() -%}
        {%- set files = lara_raw_files(node) -%}
        {%- do listing.append((node.name, files)) -%}
        {%- if not files.parquet and not files.json and node.required_table -%}
            {{ exceptions.raise_compiler_error(
                "lara: required table '" ~ node.name ~ "' has no files: looked for "
                ~ root ~ "/" ~ node.name ~ "/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz"
                ~ " (set LARA_RAW_PATH to the folder that holds the log tables)") }}
        {%- endif -%}
        {%- do statements.append(
            'create or replace view ' ~ raw_schema ~ '.' ~ node.name ~ ' as\n'
            ~ lara_raw_union_select(node, files.parquet, files.json)
        ) -%}
        {%- do log('lara: ' ~ node.name ~ ': ' ~ (files.parquet | length) ~ ' parquet, '
            ~ (files.json | length) ~ ' json lines file(s) under ' ~ root, info=false) -%}
    {%- endfor -%}
    {%- do statements.append('create or replace table ' ~ raw_schema ~ '.raw_files as\n'
        ~ lara_raw_files_select(listing)) -%}
    {{ return(statements | join(';\n') ~ ';') }}
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


{% macro lara_sql_string(value) %}
    {#- `value` as a SQL string literal, quotes escaped: the one way a path or a
        value from the raw logs enters SQL text (raw values are hostile). -#}
    {{ return(adapter.dispatch('lara_sql_string', 'lara')(value)) }}
{% endmacro %}

{% macro default__lara_sql_string(value) -%}
    {{ return("'" ~ (value | string | replace("'", "''")) ~ "'") }}
{%- endmacro %}

{#- Spark SQL string literals treat a backslash as an escape character. -#}
{% macro spark__lara_sql_string(value) -%}
    {{ return("'" ~ (value | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") }}
{%- endmacro %}


{% macro lara_raw_files_select(tables) %}
    {#- select table_name, source_file, partition_value, file_format over the
        data files found for each contract table: `tables` is a list of
        (table name, {'parquet': [...], 'json': [...]}) pairs. The registration
        hook stores it as lara_raw.raw_files, the listing every incremental
        decision reads. -#}
    {%- set rows = [] -%}
    {%- for table_name, files in tables -%}
        {%- for kind, paths in [('parquet', files.parquet), ('jsonl', files.json)] -%}
            {%- for path in paths -%}
                {%- do rows.append('(' ~ lara_sql_string(table_name) ~ ', ' ~ lara_sql_string(path) ~ ', '
                    ~ lara_sql_string(lara_partition_of(path)) ~ ', ' ~ lara_sql_string(kind) ~ ')') -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if rows %}
    select * from (values
        {{ rows | join(',\n        ') }}
    ) as listed (table_name, source_file, partition_value, file_format)
    {%- else %}
    select
        cast(null as {{ dbt.type_string() }}) as table_name,
        cast(null as {{ dbt.type_string() }}) as source_file,
        cast(null as {{ dbt.type_string() }}) as partition_value,
        cast(null as {{ dbt.type_string() }}) as file_format
    where false
    {%- endif %}
{% endmacro %}


{#
    lara_pending_partitions(table_name): the raw partitions an incremental run
    loads into base_lara__<table_name>: every partition holding a listed file
    that lara_incremental_manifest (the load log, as the last completed run
    left it) does not record, e.g. a new day or a late file dropped into an
    old day, plus the last `lara_lookback_days` days the log records (files
    still being appended to). Returns none when there is nothing to compare
    with (no manifest yet, or `--full-refresh`): then everything is read.
#}
{% macro lara_pending_partitions(table_name) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
    {%- if flags.FULL_REFRESH or manifest is none -%}{{ return(none) }}{%- endif -%}
    {%- set table_literal = lara_sql_string(table_name) -%}
    {%- set latest = run_query(
        "select cast(max(partition_value) as " ~ dbt.type_string() ~ ") from " ~ manifest
        ~ " where table_name = " ~ table_literal ~ " and " ~ lara_try_cast('partition_value', 'date') ~ " is not null"
    ).columns[0].values()[0] -%}
    {%- set lookback = var('lara_lookback_days') | int -%}
    {%- set cutoff = (modules.datetime.date.fromisoformat(latest)
        - modules.datetime.timedelta(days=lookback)).isoformat() if latest else none -%}
    {%- set query -%}
        select distinct listed.partition_value
        from {{ var('lara_raw_schema', 'lara_raw') }}.raw_files as listed
        left join (
            select distinct source_file from {{ manifest }} where table_name = {{ table_literal }}
        ) as loaded
            on listed.source_file = loaded.source_file
        where
            listed.table_name = {{ table_literal }}
            and (
                loaded.source_file is null
                {%- if cutoff %}
                or (
                    {{ lara_try_cast('listed.partition_value', 'date') }} is not null
                    and listed.partition_value >= {{ lara_sql_string(cutoff) }}
                )
                {%- endif %}
            )
        order by 1
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{% endmacro %}


{#
    lara_raw_pending_select(table_name): the raw rows an incremental run of
    base model base_lara__<table_name> reads, with the columns of the raw
    view: every file of each pending partition (lara_pending_partitions).
    Other partitions are not read at all.
#}
{% macro lara_raw_pending_select(table_name) %}
    {%- set node = (lara_contract_tables() | selectattr('name', 'equalto', table_name) | first) -%}
    {%- if not execute -%}{{ return(lara_raw_empty_select(node)) }}{%- endif -%}
    {%- set files = lara_raw_files(node) -%}
    {%- set pending = lara_pending_partitions(table_name) -%}
    {%- if pending is none -%}
        {%- set pending = [] -%}
        {%- for path in files.parquet + files.json if lara_partition_of(path) not in pending -%}
            {%- do pending.append(lara_partition_of(path)) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set parquet = [] -%}
    {%- set json = [] -%}
    {%- for path in files.parquet if lara_partition_of(path) in pending -%}{%- do parquet.append(path) -%}{%- endfor -%}
    {%- for path in files.json if lara_partition_of(path) in pending -%}{%- do json.append(path) -%}{%- endfor -%}
    {%- do log('lara: ' ~ table_name ~ ': incremental run reads ' ~ ((parquet | length) + (json | length))
        ~ ' file(s) in ' ~ (pending | length) ~ ' pending partition(s)', info=true) -%}
    {{ return(adapter.dispatch('lara_raw_partitions_select', 'lara')(node, parquet, json, pending)) }}
{% endmacro %}


{% macro duckdb__lara_raw_partitions_select(node, parquet_files, json_files, partitions) %}
    {#- The rows of the given files (DuckDB reads a list of files). -#}
    {{ return(lara_raw_union_select(node, parquet_files, json_files)) }}
{% endmacro %}


{% macro lara_raw_files(node) %}
    {#- The data files of one contract table: {'parquet': [...], 'json': [...]},
        sorted by path. Stops on a file of an unsupported kind. -#}
    {%- set files = {'parquet': [], 'json': []} -%}
    {%- for path in adapter.dispatch('lara_raw_file_paths', 'lara')(node) -%}
        {%- set base = path.split('/')[-1] -%}
        {%- if base.startswith('_') or base.startswith('.') -%}
            {#- Hadoop/Spark markers such as _SUCCESS: not data. -#}
        {%- elif base.endswith('.parquet') -%}
            {%- do files.parquet.append(path) -%}
        {%- elif base.endswith('.jsonl') or base.endswith('.jsonl.gz') -%}
            {%- do files.json.append(path) -%}
        {%- else -%}
            {{ exceptions.raise_compiler_error(
                "lara: unsupported file '" ~ path ~ "' in table '" ~ node.name
                ~ "': expected *.parquet, *.jsonl or *.jsonl.gz") }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(files) }}
{% endmacro %}


{% macro duckdb__lara_raw_file_paths(node) %}
    {%- set table_glob = lara_raw_root() ~ '/' ~ node.name ~ '/dt=*/*' -%}
    {{ return(run_query("select file from glob('" ~ table_glob ~ "') order by file").columns[0].values() | list) }}
{% endmacro %}


{% macro lara_partition_of(path) %}
    {#- The dt= value of a raw file's partition folder. -#}
    {{ return(path.split('/dt=')[-1].split('/')[0]) }}
{% endmacro %}


{% macro lara_sql_string_list(values) -%}
    [{%- for value in values -%}'{{ value | replace("'", "''") }}'{{ ', ' if not loop.last }}{%- endfor -%}]
{%- endmacro %}


{% macro lara_expected_parquet_types(lara_type) %}
    {#- DuckDB types accepted in Parquet files for each contract type. -#}
    {%- set accepted = {
        'id': ['VARCHAR'],
        'string': ['VARCHAR'],
        'enum': ['VARCHAR'],
        'timestamp': ['TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIMESTAMP_NS', 'TIMESTAMP_MS', 'TIMESTAMP_S', 'VARCHAR'],
        'boolean': ['BOOLEAN'],
        'integer': ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'HUGEINT'],
        'float': ['FLOAT', 'DOUBLE', 'DECIMAL', 'TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT'],
        'string_list': ['VARCHAR[]'],
    } -%}
    {{ return(accepted[lara_type]) }}
{% endmacro %}


{% macro lara_check_parquet_types(node, files) %}
    {#- A required column of the wrong type is a producer bug, not a row defect:
        stop with the file and the column named. -#}
    {%- set names = node.columns | map(attribute='name') | list -%}
    {%- set by_name = {} -%}
    {%- for column in node.columns -%}{%- do by_name.update({column.name: column}) -%}{%- endfor -%}
    {%- set schema_rows = run_query(
        "select file_name, name, coalesce(duckdb_type, type) from parquet_schema("
        ~ lara_sql_string_list(files) ~ ") where name in " ~ '(' ~ (lara_sql_string_list(names)[1:-1]) ~ ')'
        ~ " and repetition_type is distinct from 'REPEATED'"
    ) -%}
    {%- for row in schema_rows.rows -%}
        {%- set column = by_name[row[1]] -%}
        {%- set actual = (row[2] | string | upper).split('(')[0] -%}
        {%- if column.get('required') and actual not in lara_expected_parquet_types(column.lara_type) -%}
            {{ exceptions.raise_compiler_error(
                "lara: Parquet file '" ~ row[0] ~ "' has column '" ~ row[1] ~ "' of type "
                ~ row[2] ~ "; table '" ~ node.name ~ "' requires a " ~ column.lara_type
                ~ " (" ~ (lara_expected_parquet_types(column.lara_type) | join(', ')) ~ ")") }}
        {%- endif -%}
    {%- endfor -%}
    {#- Columns present in at least one file; the others are read as null. -#}
    {%- set present = [] -%}
    {%- for row in schema_rows.rows if row[1] not in present -%}
        {%- do present.append(row[1]) -%}
    {%- endfor -%}
    {{ return(present) }}
{% endmacro %}


{% macro lara_raw_parquet_select(node, files) %}
    {%- set present = lara_check_parquet_types(node, files) -%}
    {%- set columns = node.columns -%}
    {%- set raw_fields = [] -%}
    {%- for column in columns if column.name in present -%}
        {%- do raw_fields.append(column.name ~ ' := ' ~ column.name) -%}
    {%- endfor %}
    select
        'parquet' as _source_format,
        filename as _source_file,
        file_row_number + 1 as _source_line,
        regexp_extract(filename, 'dt=([^/]+)', 1) as _partition_value,
        true as _is_parseable,
        {% if raw_fields -%}
        cast(to_json(struct_pack({{ raw_fields | join(', ') }})) as varchar)
        {%- else -%}'{}'{%- endif %} as _raw_row,
        {%- for column in columns %}
        {% if column.name not in present -%}
        cast(null as varchar)
        {%- elif column.lara_type == 'string_list' -%}
        cast(to_json({{ column.name }}) as varchar)
        {%- else -%}
        cast({{ column.name }} as varchar)
        {%- endif %} as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from read_parquet(
        {{ lara_sql_string_list(files) }},
        union_by_name = true,
        filename = true,
        file_row_number = true,
        hive_partitioning = false
    )
{% endmacro %}


{% macro lara_raw_json_select(node, files) %}
    {%- set columns = node.columns %}
    select
        'jsonl' as _source_format,
        _source_file,
        _source_line,
        regexp_extract(_source_file, 'dt=([^/]+)', 1) as _partition_value,
        _is_parseable,
        _line as _raw_row,
        {%- for column in columns %}
        {%- if column.lara_type == 'string_list' %}
        nullif(cast(json_extract(_object, '$."{{ column.name }}"') as varchar), 'null')
        {%- else %}
        json_extract_string(_object, '$."{{ column.name }}"')
        {%- endif %} as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from (
        select
            *,
            {#- Only valid objects reach the JSON functions; others read as {}. -#}
            case when _is_parseable then _line else '{}' end as _object
        from (
        select
            _source_file,
            _line,
            _row_in_scan - min(_row_in_scan) over (partition by _source_file) + 1 as _source_line,
            case
                when json_valid(_line) then json_type(_line) = 'OBJECT'
                else false
            end as _is_parseable
        from (
            {#- One text column per line: no delimiter or quote can split it.
                Rows keep file order (preserve_insertion_order), so the
                running row number gives each line's number in its file. -#}
            select
                filename as _source_file,
                line as _line,
                row_number() over () as _row_in_scan
            from read_csv(
                {{ lara_sql_string_list(files) }},
                columns = {'line': 'VARCHAR'},
                delim = chr(31),
                quote = '',
                escape = '',
                header = false,
                auto_detect = false,
                filename = true,
                hive_partitioning = false,
                strict_mode = false,
                parallel = false
            )
        )
        )
    )
    {#- Blank lines are not records. -#}
    where trim(coalesce(_line, '')) <> ''
{% endmacro %}


{% macro lara_raw_empty_select(node) %}
    {%- set columns = node.columns %}
    select
        cast(null as {{ dbt.type_string() }}) as _source_format,
        cast(null as {{ dbt.type_string() }}) as _source_file,
        cast(null as bigint) as _source_line,
        cast(null as {{ dbt.type_string() }}) as _partition_value,
        cast(null as boolean) as _is_parseable,
        cast(null as {{ dbt.type_string() }}) as _raw_row,
        {%- for column in columns %}
        cast(null as {{ dbt.type_string() }}) as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    where false
{% endmacro %}


{#- ------------------------------------------------------------------ Spark

    Same views, same columns, same errors as the DuckDB variant, in Spark SQL:
    - Files are listed under the raw root with the binaryFile source
      (spark__lara_raw_file_paths); an incremental run reads only the dt=
      folders of its pending partitions (spark__lara_raw_partitions_select).
    - Parquet: `parquet.<glob>` with union by name
      (spark.sql.parquet.mergeSchema, set in profiles.yml and here);
      `_source_line` is `_metadata.row_index + 1` (Spark 3.5+). The type check
      runs on the merged schema, so an error names the table, the column and
      the glob rather than one file; files whose types disagree among
      themselves fail in Spark's schema merge.
    - JSON Lines (plain and .gz): the `text` source, one row per line.
      `_source_line` is exact: a split of a file is read in order by one task,
      monotonically_increasing_id() increases within a task, and
      `_metadata.file_block_start` orders the splits of a file (a .gz file is
      never split), so row_number() over (partition by file order by
      block start, scan id) is the line number, blank lines counted as in
      DuckDB. A line is parseable when it starts with `{` and parses as a
      JSON object; values are read as text (nested values as compact JSON).
-#}
{% macro spark__lara_register_raw_sources() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set root = lara_raw_root() -%}
    {%- set raw_schema = var('lara_raw_schema', 'lara_raw') -%}
    {%- do run_query('set spark.sql.parquet.mergeSchema=true') -%}
    {%- set statements = ['create schema if not exists ' ~ raw_schema] -%}
    {%- for node in lara_contract_tables() -%}
        {%- set files = lara_raw_files(node) -%}
        {%- if not files.parquet and not files.json and node.required_table -%}
            {{ exceptions.raise_compiler_error(
                "lara: required table '" ~ node.name ~ "' has no files: looked for "
                ~ root ~ "/" ~ node.name ~ "/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz"
                ~ " (set LARA_RAW_PATH to the folder that holds the log tables)") }}
        {%- endif -%}
        {%- do statements.append(
            'create or replace view ' ~ raw_schema ~ '.' ~ node.name ~ ' as\n'
            ~ spark__lara_raw_partitions_select(node, files.parquet, files.json, none)
        ) -%}
        {%- do log('lara: ' ~ node.name ~ ': ' ~ (files.parquet | length) ~ ' parquet, '
            ~ (files.json | length) ~ ' json lines file(s) under ' ~ root, info=false) -%}
    {%- endfor -%}
    {#- dbt-spark runs a hook as one statement: run them one by one here. -#}
    {%- for statement in statements -%}
        {%- do run_query(statement) -%}
    {%- endfor -%}
    {{ return('select 1') }}
{% endmacro %}


{% macro spark__lara_raw_file_paths(node) %}
    {#- Data file paths of one table, listed with the binaryFile source
        (recursive, contents not read; Spark itself skips hidden and
        `_`-prefixed files). Only `<table>/dt=<value>/<file>` paths count, as
        the DuckDB glob. The listing starts at the raw root, so a table
        without a folder lists as empty rather than failing. -#}
    {%- set view = 'lara__raw_files_' ~ node.name -%}
    {%- do run_query(
        "create or replace temporary view " ~ view ~ " using binaryFile options (path '"
        ~ lara_raw_root() ~ "', recursiveFileLookup 'true')") -%}
    {%- set listed = run_query(
        "select path from (select regexp_replace(path, '^file:', '') as path from " ~ view ~ ")"
        ~ " where regexp_extract(path, '/([^/]+)/dt=[^/]+/[^/]+$', 1) = '" ~ node.name ~ "'"
        ~ " order by path") -%}
    {{ return(listed.columns[0].values() | list) }}
{% endmacro %}


{% macro spark__lara_raw_partitions_select(node, parquet_files, json_files, partitions) %}
    {#- The rows of the given files: Spark reads a path glob per format, over
        every dt= folder (partitions none) or the given ones (`dt={a,b}`);
        a partition name holding a glob character falls back to every
        folder filtered by name. -#}
    {%- set root = lara_raw_root() ~ '/' ~ node.name -%}
    {%- set globbable = namespace(ok=partitions is not none) -%}
    {%- for partition in (partitions or []) -%}
        {%- for character in '{}[]*?\\,' if character in partition -%}{%- set globbable.ok = false -%}{%- endfor -%}
    {%- endfor -%}
    {%- set globbable = globbable.ok -%}
    {%- set folders = ('dt={' ~ (partitions | join(',')) ~ '}') if globbable else 'dt=*' -%}
    {%- set parts = [] -%}
    {%- if parquet_files -%}
        {%- do parts.append(spark__lara_raw_parquet_select(node, root ~ '/' ~ folders ~ '/*.parquet')) -%}
    {%- endif -%}
    {%- if json_files -%}
        {%- do parts.append(spark__lara_raw_json_select(node, root ~ '/' ~ folders ~ '/*.{jsonl,jsonl.gz}')) -%}
    {%- endif -%}
    {%- if not parts -%}
        {%- do parts.append(lara_raw_empty_select(node)) -%}
    {%- endif -%}
    {%- set rows = parts | join('\nunion all\n') -%}
    {%- if partitions is not none and not globbable -%}
        {%- set rows = 'select * from (' ~ rows ~ ') as raw_rows where _partition_value in ('
            ~ lara_sql_string_list(partitions)[1:-1] ~ ')' -%}
    {%- endif -%}
    {{ return(rows) }}
{% endmacro %}


{% macro spark__lara_expected_parquet_types(lara_type) %}
    {#- Spark types (of the merged Parquet schema) accepted for each contract type. -#}
    {%- set integers = ['tinyint', 'smallint', 'int', 'bigint', 'decimal(20,0)'] -%}
    {%- set accepted = {
        'id': ['string'],
        'string': ['string'],
        'enum': ['string'],
        'timestamp': ['timestamp', 'timestamp_ntz', 'string'],
        'boolean': ['boolean'],
        'integer': integers,
        'float': ['float', 'double', 'decimal'] + integers,
        'string_list': ['array<string>'],
    } -%}
    {{ return(accepted[lara_type]) }}
{% endmacro %}


{% macro spark__lara_raw_parquet_select(node, files_glob) %}
    {%- set by_name = {} -%}
    {%- for column in node.columns -%}{%- do by_name.update({column.name: column}) -%}{%- endfor -%}
    {#- A temporary view rather than `describe query ... parquet.<glob>`: a failed
        schema merge then reports the column and both types. -#}
    {#- One view name per table: base models run this in parallel threads of
        one Spark session. -#}
    {%- set schema_view = 'lara__raw_parquet_schema_' ~ node.name -%}
    {%- do run_query("create or replace temporary view " ~ schema_view ~ " using parquet"
        ~ " options (path '" ~ files_glob ~ "', mergeSchema 'true')") -%}
    {%- set schema_rows = run_query("describe " ~ schema_view) -%}
    {%- set present = [] -%}
    {%- for row in schema_rows.rows if row[0] in by_name and row[0] not in present -%}
        {%- set column = by_name[row[0]] -%}
        {%- set actual = row[1] | string | lower -%}
        {%- set accepted = spark__lara_expected_parquet_types(column.lara_type) -%}
        {%- if column.get('required') and actual not in accepted and actual.split('(')[0] not in accepted -%}
            {{ exceptions.raise_compiler_error(
                "lara: Parquet files '" ~ files_glob ~ "' have column '" ~ row[0] ~ "' of type "
                ~ row[1] ~ "; table '" ~ node.name ~ "' requires a " ~ column.lara_type
                ~ " (" ~ (accepted | join(', ')) ~ ")") }}
        {%- endif -%}
        {%- do present.append(row[0]) -%}
    {%- endfor -%}
    {%- set columns = node.columns -%}
    {%- set raw_fields = [] -%}
    {%- for column in columns if column.name in present -%}
        {%- do raw_fields.append("'" ~ column.name ~ "', " ~ column.name) -%}
    {%- endfor %}
    select
        'parquet' as _source_format,
        regexp_replace(_metadata.file_path, '^file:', '') as _source_file,
        _metadata.row_index + 1 as _source_line,
        regexp_extract(_metadata.file_path, 'dt=([^/]+)', 1) as _partition_value,
        true as _is_parseable,
        {% if raw_fields -%}
        to_json(named_struct({{ raw_fields | join(', ') }}), map('ignoreNullFields', 'false'))
        {%- else -%}'{}'{%- endif %} as _raw_row,
        {%- for column in columns %}
        {% if column.name not in present -%}
        cast(null as string)
        {%- elif column.lara_type == 'string_list' -%}
        to_json({{ column.name }})
        {%- else -%}
        cast({{ column.name }} as string)
        {%- endif %} as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from parquet.`{{ files_glob }}`
{% endmacro %}


{% macro spark__lara_raw_json_select(node, files_glob) %}
    {%- set columns = node.columns %}
    select
        'jsonl' as _source_format,
        _source_file,
        _source_line,
        regexp_extract(_source_file, 'dt=([^/]+)', 1) as _partition_value,
        _is_parseable,
        _line as _raw_row,
        {%- for column in columns %}
        try_element_at(_object, '{{ column.name }}') as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from (
        select
            *,
            {#- Only valid objects are read; others read as an empty map. -#}
            case
                when _is_parseable then from_json(_line, 'map<string,string>')
                else map()
            end as _object
        from (
            select
                _source_file,
                _line,
                cast(row_number() over (
                    partition by _source_file order by _block_start, _scan_id
                ) as bigint) as _source_line,
                coalesce(
                    left(ltrim(_line), 1) = '{'
                    and from_json(_line, 'map<string,string>') is not null,
                    false
                ) as _is_parseable
            from (
                select
                    regexp_replace(_metadata.file_path, '^file:', '') as _source_file,
                    _metadata.file_block_start as _block_start,
                    monotonically_increasing_id() as _scan_id,
                    value as _line
                from text.`{{ files_glob }}`
            )
        )
    )
    {#- Blank lines are not records. -#}
    where trim(coalesce(_line, '')) <> ''
{% endmacro %}

