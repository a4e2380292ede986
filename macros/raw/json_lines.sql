{#
    JSON Lines files (plain or gzipped) as rows of a raw view: one row per
    non-blank line with its exact line number, `_is_parseable` false when the
    line is not a JSON object (staging quarantines it as json_parse_error,
    with the line as `_raw_row`), contract columns extracted as text and
    typed (macros/raw/typed_values.sql).
#}

{% macro lara_raw_json_select(node, files) %}
    {{ return(adapter.dispatch('lara_raw_json_select', 'lara')(node, files)) }}
{% endmacro %}


{% macro duckdb__lara_raw_json_select(node, files) %}
    {%- set globs = [] -%}
    {%- for path in files -%}{%- do globs.append(lara_glob_literal(path)) -%}{%- endfor %}
    select
        'jsonl' as _source_format,
        _source_file,
        _source_line,
        regexp_extract(_source_file, '/dt=([^/]*)/[^/]*$', 1) as _partition_value,
        _is_parseable,
        _line as _raw_row,
        {{ lara_typed_text_columns(node.columns) }}
    from (
        select
            *,
            {%- for column in node.columns %}
            {%- if column.lara_type == 'string_list' %}
            nullif(cast(json_extract(_object, {{ lara_sql_string('$."' ~ column.name ~ '"') }}) as varchar), 'null')
            {%- else %}
            json_extract_string(_object, {{ lara_sql_string('$."' ~ column.name ~ '"') }})
            {%- endif %} as _text_{{ column.name }}{{ ',' if not loop.last }}
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
                    {#- json_type raises on invalid JSON: only valid lines reach it. -#}
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
                        {{ lara_sql_string_list(globs) }},
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
    )
    {#- Blank lines are not records. -#}
    where trim(coalesce(_raw_row, '')) <> ''
{% endmacro %}


{#- Spark: the `text` source, one row per line. `_source_line` is exact: a
    split of a file is read in order by one task,
    monotonically_increasing_id() increases within a task, and
    `_metadata.file_block_start` orders the splits of a file (a .gz file is
    never split), so row_number() over (partition by file order by block
    start, scan id) is the line number, blank lines counted as in DuckDB. A
    line is parseable when it starts with `{` and parses as a JSON object;
    values are read as text (nested values as compact JSON), then typed. -#}
{% macro spark__lara_raw_json_select(node, files_glob) %}
    select
        'jsonl' as _source_format,
        _source_file,
        _source_line,
        regexp_extract(_source_file, '/dt=([^/]*)/[^/]*$', 1) as _partition_value,
        _is_parseable,
        _line as _raw_row,
        {{ lara_typed_text_columns(node.columns) }}
    from (
        select
            *,
            {%- for column in node.columns %}
            try_element_at(_object, {{ lara_sql_string(column.name) }}) as _text_{{ column.name }}{{ ',' if not loop.last }}
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
                    from text.{{ lara_spark_path(files_glob) }}
                )
            )
        )
    )
    {#- Blank lines are not records. -#}
    where trim(coalesce(_line, '')) <> ''
{% endmacro %}
