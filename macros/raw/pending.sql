{#
    What an incremental run of a base model reads: the pending partitions.
    A partition is pending when it holds a data file that the load log
    (lara_incremental_manifest, as the last completed run left it) does not
    record with the same size and modification time (a new day, a late file
    dropped into an old day, a file rewritten in place), or when it is one of
    the last `lara_lookback_days` days of the load (a safety net for stores
    whose listing misses appends: 1 = the newest day, 0 = none). The window
    ends at the newest day any table's current listing holds, so a table
    whose last delivery is older (a replay experiment, labels judged weeks
    ago) is not read again on every run, and a run that delivers a new day
    reads that day once, not the day before as well (ending it at the load
    log's newest day made a day's run read two days in every base model); a
    run with nothing new re-reads the newest day. A run reads every file of
    its pending partitions and replaces their rows (strategy
    lara_replace_partitions), so a rewritten file's old rows go too.
#}

{% macro lara_pending_partitions(table_name) %}
    {#- The pending partition values of a table (sorted), or none when there
        is nothing to compare with (no manifest yet, or `--full-refresh`):
        then everything is read. -#}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
    {%- if flags.FULL_REFRESH or manifest is none -%}{{ return(none) }}{%- endif -%}
    {%- set table_literal = lara_sql_string(table_name) -%}
    {%- set lookback = var('lara_lookback_days') | int -%}
    {%- set latest = run_query(
        "select cast(max(partition_value) as " ~ dbt.type_string() ~ ") from "
        ~ lara_raw_listing_relation() ~ " where file_status = 'data' and "
        ~ lara_try_cast('partition_value', 'date') ~ " is not null"
    ).columns[0].values()[0] if lookback > 0 else none -%}
    {%- set cutoff = (modules.datetime.date.fromisoformat(latest)
        - modules.datetime.timedelta(days=lookback - 1)).isoformat() if latest else none -%}
    {%- set query -%}
        select distinct listed.partition_value
        from {{ lara_raw_listing_relation() }} as listed
        left join (
            select distinct source_file, file_size_bytes, file_modified_at
            from {{ manifest }}
            where table_name = {{ table_literal }}
        ) as loaded
            on
                listed.source_file = loaded.source_file
                and listed.size_bytes = loaded.file_size_bytes
                and listed.modified_at = loaded.file_modified_at
        where
            listed.table_name = {{ table_literal }}
            and listed.file_status = 'data'
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


{% macro lara_raw_pending_select(table_name) %}
    {#- The raw rows an incremental run of base_lara__<table_name> reads, with
        the columns of the raw view: every data file of each pending
        partition. Other partitions are not read at all. -#}
    {%- set node = (lara_contract_tables() | selectattr('name', 'equalto', table_name) | first) -%}
    {%- if not execute -%}{{ return(lara_raw_empty_select(node)) }}{%- endif -%}
    {%- set pending = lara_pending_partitions(table_name) -%}
    {%- set files = lara_raw_data_files(table_name, pending) -%}
    {%- do log('lara: ' ~ table_name ~ ': incremental run reads ' ~ ((files.parquet | length) + (files.json | length))
        ~ ' file(s) in ' ~ ((pending | length) if pending is not none else 'every') ~ ' pending partition(s)', info=true) -%}
    {{ return(adapter.dispatch('lara_raw_partitions_select', 'lara')(node, files.parquet, files.json, pending)) }}
{% endmacro %}


{% macro duckdb__lara_raw_partitions_select(node, parquet_files, json_files, partitions) %}
    {#- The rows of the given files (DuckDB reads a list of files). -#}
    {{ return(lara_raw_union_select(node, parquet_files, json_files)) }}
{% endmacro %}


{% macro spark__lara_raw_partitions_select(node, parquet_files, json_files, partitions) %}
    {#- The rows of the given files: Spark reads a path glob per format over
        every dt= folder (partitions none) or the given ones (`dt={a,b}`); a
        partition name holding a glob character falls back to every folder
        filtered by name. Only `<table>/dt=<value>/<file>` paths match, as in
        the listing. -#}
    {%- set root = lara_raw_root() ~ '/' ~ node.name -%}
    {%- set globbable = namespace(ok=partitions is not none) -%}
    {%- for partition in (partitions or []) -%}
        {%- for character in '{}[]*?\\,`' if character in partition -%}{%- set globbable.ok = false -%}{%- endfor -%}
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
        {%- set rows = 'select * from (' ~ rows ~ ') as raw_rows where _partition_value in '
            ~ lara_sql_in_list(partitions) -%}
    {%- endif -%}
    {{ return(rows) }}
{% endmacro %}
