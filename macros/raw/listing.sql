{#
    The raw listing: every file under `$LARA_RAW_PATH/<contract table>/`,
    classified once per dbt invocation by the registration hook into the
    table `lara_raw.raw_files` (source lara_raw_listing.raw_files):

        data      `<table>/dt=<value>/<name>.parquet|.jsonl|.jsonl.gz` that reads
        ignored   a hidden or `_`-prefixed file or folder (`_SUCCESS`, `.crc`,
                  `_temporary/`): not data, listed for the record
        skipped   a file that cannot be data, with `skip_reason`:
                    outside_partition_layout  not directly in a `dt=` folder
                                              (`<table>/loose.jsonl`,
                                              `<table>/dt=x/sub/nested.jsonl`)
                    unsupported_file_type     another extension
                    unreadable_file           a zero-byte or truncated gzip, a
                                              Parquet file without a valid
                                              footer, a line that is not UTF-8
                    invalid_file_schema       a Parquet file whose required
                                              column has a type the contract
                                              does not accept
                  and `skip_detail` (the error, the column and its type).

    Skipped files are read by nothing; the rest of the build goes on, they
    are counted in the reconciliation and listed in data_quality.dq_raw_files,
    and the data-quality gate fails naming them. The build stops only when a
    required table has no data file at all.

    The unreadable check reads a file whole (a gzip stream to its end, every
    line's encoding), so it runs only on files the load log
    (lara_incremental_manifest) does not hold with the same size and time:
    new and rewritten files. On DuckDB it is the SQL function
    lara_file_problem of the project's dbt-duckdb plugin (lara.duckdb_plugin,
    profiles.yml); without the plugin the check is skipped with a warning.
#}

{% macro lara_raw_root() %}
    {%- set root = var('lara_raw_path') | string -%}
    {{ return(root.rstrip('/')) }}
{% endmacro %}


{% macro lara_raw_listing_relation(identifier='raw_files') %}
    {{ return(var('lara_raw_schema', 'lara_raw') ~ '.' ~ identifier) }}
{% endmacro %}


{% macro lara_accepted_parquet_types(lara_type) %}
    {#- DuckDB types a Parquet file may give a required column of each
        contract type (other columns may have any type: read as text). -#}
    {%- set integers = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT',
        'UINTEGER', 'UBIGINT', 'HUGEINT'] -%}
    {%- set accepted = {
        'id': ['VARCHAR'],
        'string': ['VARCHAR'],
        'enum': ['VARCHAR'],
        'timestamp': ['TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIMESTAMP_NS', 'TIMESTAMP_MS', 'TIMESTAMP_S', 'VARCHAR'],
        'boolean': ['BOOLEAN'],
        'integer': integers + ['FLOAT', 'DOUBLE', 'DECIMAL'],
        'float': ['FLOAT', 'DOUBLE', 'DECIMAL'] + integers,
        'string_list': ['VARCHAR[]'],
    } -%}
    {{ return(accepted[lara_type]) }}
{% endmacro %}


{#- ---------------------------------------------------------------- DuckDB -#}

{% macro duckdb__lara_list_raw_files() %}
    {#- Writes lara_raw.raw_files (the classified listing) and
        lara_raw.raw_file_columns (source_file, column_name, column_type of
        every readable Parquet data file's contract columns). -#}
    {%- set root = lara_raw_root() -%}
    {%- set tables = lara_contract_table_names() -%}
    {%- do run_query('create or replace temporary table raw_files_listed as ' ~ duckdb__lara_raw_files_classified(root, tables)) -%}
    {%- set problems = [] -%}
    {%- set to_check = lara_raw_files_to_check() -%}
    {%- if to_check -%}
        {%- set has_check = run_query(
            "select count(*) from duckdb_functions() where function_name = 'lara_file_problem'"
        ).columns[0].values()[0] > 0 -%}
        {%- if has_check -%}
            {%- set checked = run_query(
                "select source_file, lara_file_problem(source_file, file_format) from raw_files_listed"
                ~ " where source_file in " ~ lara_sql_in_list(to_check)) -%}
            {%- for row in checked.rows if row[1] is not none -%}
                {%- do problems.append((row[0], 'unreadable_file', row[1])) -%}
            {%- endfor -%}
        {%- else -%}
            {%- do log('lara: WARNING: the SQL function lara_file_problem (dbt-duckdb plugin lara.duckdb_plugin, '
                ~ 'see profiles.yml) is not loaded: raw files are not checked for readability', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {%- set unreadable = problems | map(attribute=0) | list -%}
    {%- set parquet = run_query(
        "select source_file from raw_files_listed where file_status = 'data' and file_format = 'parquet'"
        ~ (" and source_file not in " ~ lara_sql_in_list(unreadable) if unreadable else '')
        ~ " order by source_file").columns[0].values() | list -%}
    {%- set parquet_globs = [] -%}
    {%- for path in parquet -%}{%- do parquet_globs.append(lara_glob_literal(path)) -%}{%- endfor -%}
    {%- set columns_sql -%}
        {%- if parquet -%}
        select file_name as source_file, name as column_name, upper(coalesce(duckdb_type, type)) as column_type
        from parquet_schema({{ lara_sql_string_list(parquet_globs) }})
        where repetition_type is distinct from 'REPEATED'
        {%- else -%}
        select
            cast(null as varchar) as source_file,
            cast(null as varchar) as column_name,
            cast(null as varchar) as column_type
        where false
        {%- endif -%}
    {%- endset -%}
    {%- do run_query('create or replace table ' ~ lara_raw_listing_relation('raw_file_columns') ~ ' as ' ~ columns_sql) -%}
    {%- for problem in lara_parquet_schema_problems() if problem[0] not in unreadable -%}
        {%- do problems.append(problem) -%}
    {%- endfor -%}
    {%- set problem_rows = [] -%}
    {%- for file, reason, detail in problems -%}
        {%- do problem_rows.append('(' ~ lara_sql_string(file) ~ ', ' ~ lara_sql_string(reason) ~ ', '
            ~ lara_sql_string(detail) ~ ')') -%}
    {%- endfor -%}
    {%- set problems_sql -%}
        {%- if problem_rows -%}
        select * from (values {{ problem_rows | join(', ') }}) as problems (source_file, skip_reason, skip_detail)
        {%- else -%}
        select cast(null as varchar) as source_file, cast(null as varchar) as skip_reason, cast(null as varchar) as skip_detail where false
        {%- endif -%}
    {%- endset -%}
    {%- do run_query('create or replace table ' ~ lara_raw_listing_relation('raw_files') ~ ' as '
        ~ lara_raw_files_with_problems('raw_files_listed', problems_sql)) -%}
    {%- do run_query('drop table raw_files_listed') -%}
{% endmacro %}


{% macro duckdb__lara_raw_files_classified(root, tables) %}
    {#- select the listing of every file under the contract table folders,
        classified (no content is read: read_blob's size and time only). -#}
    {%- set root_glob = lara_glob_literal(root) ~ '/**' %}
    with

    listed as (
        select
            filename as source_file,
            size as size_bytes,
            timezone('UTC', last_modified) as modified_at,
            string_split(substr(filename, {{ (root | length) + 2 }}), '/') as segments
        from read_blob({{ lara_sql_string(root_glob) }})
    ),

    located as (
        select
            *,
            segments[1] as table_name,
            segments[len(segments)] as file_name,
            list_bool_or(list_transform(segments[2:], lambda segment: starts_with(segment, '_') or starts_with(segment, '.')))
                as is_marker,
            case
                when len(segments) = 3 and starts_with(segments[2], 'dt=') then substr(segments[2], 4)
            end as partition_value
        from listed
        where len(segments) >= 2 and segments[1] in {{ lara_sql_in_list(tables) }}
    )

    select
        table_name,
        source_file,
        array_to_string(segments, '/') as relative_path,
        partition_value,
        case
            when ends_with(file_name, '.parquet') then 'parquet'
            when ends_with(file_name, '.jsonl') or ends_with(file_name, '.jsonl.gz') then 'jsonl'
        end as file_format,
        size_bytes,
        modified_at,
        case
            when is_marker then 'ignored'
            when partition_value is null then 'skipped'
            when not (ends_with(file_name, '.parquet') or ends_with(file_name, '.jsonl') or ends_with(file_name, '.jsonl.gz'))
                then 'skipped'
            else 'data'
        end as file_status,
        case
            when is_marker then null
            when partition_value is null then 'outside_partition_layout'
            when not (ends_with(file_name, '.parquet') or ends_with(file_name, '.jsonl') or ends_with(file_name, '.jsonl.gz'))
                then 'unsupported_file_type'
        end as skip_reason,
        case
            when is_marker then null
            when partition_value is null then 'not directly in a dt= folder of the table: ' || array_to_string(segments, '/')
            when not (ends_with(file_name, '.parquet') or ends_with(file_name, '.jsonl') or ends_with(file_name, '.jsonl.gz'))
                then 'expected *.parquet, *.jsonl or *.jsonl.gz'
        end as skip_detail
    from located
{% endmacro %}


{% macro lara_raw_files_to_check() %}
    {#- Data files the load log does not hold with the same size and time
        (every data file on a full refresh or before the first completed run). -#}
    {%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
    {%- set query -%}
        select listed.source_file
        from raw_files_listed as listed
        {%- if manifest is not none and not flags.FULL_REFRESH %}
        left join (
            select distinct source_file, file_size_bytes, file_modified_at from {{ manifest }}
        ) as loaded
            on
                listed.source_file = loaded.source_file
                and listed.size_bytes = loaded.file_size_bytes
                and listed.modified_at = loaded.file_modified_at
        where listed.file_status = 'data' and loaded.source_file is null
        {%- else %}
        where listed.file_status = 'data'
        {%- endif %}
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{% endmacro %}


{% macro lara_parquet_schema_problems() %}
    {#- (file, 'invalid_file_schema', detail) for every Parquet file of
        raw_file_columns whose required column has a type the contract does
        not accept. -#}
    {%- set problems = [] -%}
    {%- set rows = run_query('select source_file, column_name, column_type from '
        ~ lara_raw_listing_relation('raw_file_columns')).rows -%}
    {%- set table_of = {} -%}
    {%- for row in run_query("select source_file, table_name from raw_files_listed where file_format = 'parquet'").rows -%}
        {%- do table_of.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {%- set contract = lara_contract() -%}
    {%- set reported = [] -%}
    {%- for file, column_name, column_type in rows if file in table_of and file not in reported -%}
        {%- for column in contract[table_of[file]].columns
            if column.name == column_name and column.get('required')
            and column_type.split('(')[0] not in lara_accepted_parquet_types(column.lara_type) -%}
            {%- do problems.append((file, 'invalid_file_schema', "column '" ~ column_name ~ "' is "
                ~ column_type ~ "; table '" ~ table_of[file] ~ "' requires a " ~ column.lara_type
                ~ " (" ~ (lara_accepted_parquet_types(column.lara_type) | join(', ')) ~ ")")) -%}
            {%- do reported.append(file) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(problems) }}
{% endmacro %}


{% macro lara_raw_files_with_problems(listed, problems_sql) %}
    {#- The listing with the problems found by the checks marked skipped. -#}
    select
        listed.table_name,
        listed.source_file,
        listed.relative_path,
        listed.partition_value,
        listed.file_format,
        listed.size_bytes,
        listed.modified_at,
        case when problems.source_file is not null then 'skipped' else listed.file_status end as file_status,
        coalesce(problems.skip_reason, listed.skip_reason) as skip_reason,
        coalesce(problems.skip_detail, listed.skip_detail) as skip_detail
    from {{ listed }} as listed
    left join ({{ problems_sql }}) as problems
        on listed.source_file = problems.source_file
{% endmacro %}


{% macro lara_raw_data_files(table_name, partitions=none) %}
    {#- The readable data files of one table, optionally of some partitions:
        {'parquet': [...], 'json': [...]}, sorted by path. -#}
    {%- set files = {'parquet': [], 'json': []} -%}
    {%- if not execute -%}{{ return(files) }}{%- endif -%}
    {%- set query -%}
        select source_file, file_format from {{ lara_raw_listing_relation() }}
        where
            table_name = {{ lara_sql_string(table_name) }}
            and file_status = 'data'
            {%- if partitions is not none %}
            and partition_value in {{ lara_sql_in_list(partitions) }}
            {%- endif %}
        order by source_file
    {%- endset -%}
    {%- for row in run_query(query).rows -%}
        {%- do (files.parquet if row[1] == 'parquet' else files.json).append(row[0]) -%}
    {%- endfor -%}
    {{ return(files) }}
{% endmacro %}


{#- ----------------------------------------------------------------- Spark

    The same listing with the binaryFile source (path, length and time; the
    contents are not read). The readability check is DuckDB's plugin
    function: on Spark a broken file fails the build, naming it, as Spark
    reports it; a Parquet file whose required column has the wrong type
    fails the schema merge of its table the same way (README, Running on
    Spark). -#}
{% macro spark__lara_list_raw_files() %}
    {%- set root = lara_raw_root() -%}
    {%- set tables = lara_contract_table_names() -%}
    {%- do run_query("create or replace temporary view lara__raw_blobs using binaryFile options (path "
        ~ lara_sql_string(root) ~ ", recursiveFileLookup 'true')") -%}
    {%- set relation = lara_raw_listing_relation() -%}
    {%- set classified -%}
        with

        listed as (
            select
                regexp_replace(path, '^file:', '') as source_file,
                length as size_bytes,
                cast(modificationTime as timestamp) as modified_at
            from lara__raw_blobs
        ),

        located as (
            select
                *,
                split(substr(source_file, instr(source_file, {{ lara_sql_string(root ~ '/') }}) + {{ (root | length) + 1 }}), '/')
                    as segments
            from listed
            where instr(source_file, {{ lara_sql_string(root ~ '/') }}) > 0
        ),

        parts as (
            select
                *,
                segments[0] as table_name,
                element_at(segments, -1) as file_name,
                exists(slice(segments, 2, size(segments) - 1), segment -> left(segment, 1) in ('_', '.')) as is_marker,
                case when size(segments) = 3 and left(segments[1], 3) = 'dt=' then substr(segments[1], 4) end
                    as partition_value
            from located
            where size(segments) >= 2 and segments[0] in {{ lara_sql_in_list(tables) }}
        )

        select
            table_name,
            source_file,
            array_join(segments, '/') as relative_path,
            partition_value,
            case
                when file_name like '%.parquet' then 'parquet'
                when file_name like '%.jsonl' or file_name like '%.jsonl.gz' then 'jsonl'
            end as file_format,
            size_bytes,
            modified_at,
            case
                when is_marker then 'ignored'
                when partition_value is null then 'skipped'
                when not (file_name like '%.parquet' or file_name like '%.jsonl' or file_name like '%.jsonl.gz')
                    then 'skipped'
                else 'data'
            end as file_status,
            case
                when is_marker then null
                when partition_value is null then 'outside_partition_layout'
                when not (file_name like '%.parquet' or file_name like '%.jsonl' or file_name like '%.jsonl.gz')
                    then 'unsupported_file_type'
            end as skip_reason,
            case
                when is_marker then null
                when partition_value is null then concat('not directly in a dt= folder of the table: ', array_join(segments, '/'))
                when not (file_name like '%.parquet' or file_name like '%.jsonl' or file_name like '%.jsonl.gz')
                    then 'expected *.parquet, *.jsonl or *.jsonl.gz'
            end as skip_detail
        from parts
    {%- endset -%}
    {%- do run_query('drop table if exists ' ~ relation) -%}
    {%- do run_query('create table ' ~ relation ~ ' using parquet as ' ~ classified) -%}
{% endmacro %}
