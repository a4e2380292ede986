{#
    Incremental models on Spark. Plain Parquet tables (no Delta or Iceberg
    here) have no DELETE, so the project's strategies replace whole
    partitions instead of rows, with dynamic partition overwrite, from the
    same run state as on DuckDB (models/run_state):

    lara_replace_partitions (base models, partition `_partition_value`, the
        raw file's dt= folder): a run rewrites every pending partition and
        every partition holding an earlier version of a key it re-judges
        (stage_source.sql carries that partition's other rows unchanged).
    lara_replace_sessions (session-grained models, partition
        `_lara_session_date`): the model computes the rows of
        lara_sessions_this_run it recomputes (lara_sessions_this_run_select);
        each day that held or now holds one of those
        sessions is rewritten with those rows plus, carried unchanged, the
        rows of its other sessions; a day left without rows is dropped.
    lara_replace_days (daily aggregates, partition = the day column): the
        model computes the day rows of lara_days_this_run and the period
        totals (day null); those partitions are rewritten, a day left
        without rows is dropped.
    lara_replace_table (models recomputed whole, unpartitioned): on a run
        that loaded one of the model's tables (lara_tables_this_run) the
        whole table is overwritten from the model's query; on any other run
        nothing is written.

    The first three first write the new rows to `<model>__lara_batch` (the query dbt
    builds reads the model's own table; lara_replace_sessions writes the
    model's rows to `<model>__lara_new` first, so its query runs once), drop
    emptied partitions, then
    `insert overwrite` from the batch; the statement dbt runs last drops
    the batch table.

    dbt-spark validates the strategy name against its own list and has no
    hook for custom strategies, so the two adapter macros below are
    overridden by name (a root project's macros win over an adapter's) and
    fall back to the adapter's behaviour for every other strategy.
#}

{% macro lara_spark_strategies() %}
    {{ return(['lara_replace_partitions', 'lara_replace_sessions', 'lara_replace_days', 'lara_replace_table']) }}
{% endmacro %}


{#- The two overrides below replace dbt-spark's macros of the same name
    (internal packages cannot be called by package name), so for every other
    strategy they do what dbt-spark 1.11 does: same checks, same SQL macros.
    `dbt run-operation lara_check_spark_strategy_overrides` (test_spark.py)
    checks that. -#}
{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
    {%- set adapter_strategies = ['append', 'merge', 'insert_overwrite', 'microbatch'] -%}
    {%- if raw_strategy in lara_spark_strategies() -%}
        {%- if raw_strategy != 'lara_replace_table' and not config.get('partition_by') -%}
            {{ exceptions.raise_compiler_error(
                "lara: incremental strategy '" ~ raw_strategy ~ "' needs a partition_by config") }}
        {%- endif -%}
    {%- elif raw_strategy not in adapter_strategies -%}
        {{ exceptions.raise_compiler_error(
            "Invalid incremental strategy provided: " ~ raw_strategy ~ "\n    Expected one of: '"
            ~ ((adapter_strategies + lara_spark_strategies()) | join("', '")) ~ "'") }}
    {%- elif raw_strategy == 'merge' and file_format not in ['delta', 'iceberg', 'hudi'] -%}
        {{ exceptions.raise_compiler_error(
            "Invalid incremental strategy provided: " ~ raw_strategy ~ "\n    You can only choose this"
            ~ " strategy when file_format is set to 'delta' or 'iceberg' or 'hudi'") }}
    {%- elif raw_strategy in ['insert_overwrite', 'microbatch'] and target.endpoint -%}
        {{ exceptions.raise_compiler_error(
            "Invalid incremental strategy provided: " ~ raw_strategy ~ "\n    You cannot use this"
            ~ " strategy when connecting via endpoint\n    Use the 'append' or 'merge' strategy instead") }}
    {%- endif -%}
    {{ return(raw_strategy) }}
{% endmacro %}


{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {%- if strategy == 'lara_replace_partitions' -%}
        {{ lara_spark_replace_partitions(source, target) }}
    {%- elif strategy == 'lara_replace_sessions' -%}
        {{ lara_spark_replace_partitions(source, target, mode='sessions') }}
    {%- elif strategy == 'lara_replace_days' -%}
        {{ lara_spark_replace_partitions(source, target, mode='days') }}
    {%- elif strategy == 'lara_replace_table' -%}
        {{ lara_spark_replace_table(source, target) }}
    {%- elif strategy == 'append' -%}
        {{ get_insert_into_sql(source, target) }}
    {%- elif strategy in ['insert_overwrite', 'microbatch'] -%}
        {%- if strategy == 'microbatch' and not config.get('partition_by') -%}
            {{ exceptions.raise_compiler_error(
                "dbt-spark 'microbatch' incremental strategy requires a `partition_by` config.") }}
        {%- endif -%}
        {{ get_insert_overwrite_sql(source, target, existing) }}
    {%- elif strategy == 'merge' -%}
        {{ get_merge_sql(target, source, unique_key, dest_columns=none, incremental_predicates=incremental_predicates) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("No known SQL for the incremental strategy provided: " ~ strategy) }}
    {%- endif -%}
{% endmacro %}


{% macro lara_check_spark_strategy_overrides() %}
    {#- run-operation: the overrides give dbt-spark's answers for its own
        strategies. Raises on the first wrong answer. -#}
    {%- for strategy, file_format in [('append', 'parquet'), ('insert_overwrite', 'parquet'),
            ('merge', 'delta'), ('microbatch', 'parquet')] -%}
        {%- if dbt_spark_validate_get_incremental_strategy(strategy, file_format) != strategy -%}
            {{ exceptions.raise_compiler_error('lara: validation changed strategy ' ~ strategy) }}
        {%- endif -%}
    {%- endfor -%}
    {%- set schema = 'lara_override_check' -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- do run_query('drop table if exists ' ~ schema ~ '.probe') -%}
    {%- do run_query('create table ' ~ schema ~ '.probe using parquet partitioned by (day) as'
        ~ " select 1 as id, date'2026-08-01' as day") -%}
    {%- set probe = api.Relation.create(schema=schema, identifier='probe') -%}
    {%- for strategy, expected in [('append', 'insert into table'), ('insert_overwrite', 'insert overwrite table')] -%}
        {%- set sql = dbt_spark_get_incremental_sql(strategy, probe, probe, probe, none, none) | trim | lower -%}
        {%- if not sql.startswith(expected) -%}
            {{ exceptions.raise_compiler_error('lara: ' ~ strategy ~ ' gave ' ~ sql) }}
        {%- endif -%}
        {%- do log('lara: ' ~ strategy ~ ' -> ' ~ (sql.split() | join(' ')), info=true) -%}
    {%- endfor -%}
    {%- do run_query('drop schema ' ~ schema ~ ' cascade') -%}
    {%- do log('lara: dbt-spark strategy overrides ok', info=true) -%}
{% endmacro %}


{% macro lara_spark_replace_partitions(source, target, mode='partitions') %}
    {#- Runs the replacement and returns the statement that drops the batch.
        mode: partitions (base models: the batch holds whole partitions),
        sessions (carry the other sessions of each rewritten day, less the
        rows the model recomputed by config lara_recompute_key), days
        (daily aggregates). -#}
    {%- set batch = target.incorporate(path={'identifier': target.identifier ~ '__lara_batch'}) -%}
    {%- set partition_by = config.get('partition_by') -%}
    {%- set partition_column = (partition_by if partition_by is string else partition_by[0]) -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | join(', ') -%}
    {%- do run_query('drop table if exists ' ~ batch) -%}
    {%- if mode == 'sessions' -%}
        {#- The model's rows are written once to `<model>__lara_new` and read
            from there: `source` is a temporary view, and each of the four
            reads below (the rows, their days in the batch and in the emptied
            days, their keys) would plan and run the model's whole query again. -#}
        {%- set new_rows = target.incorporate(path={'identifier': target.identifier ~ '__lara_new'}) -%}
        {%- do run_query('drop table if exists ' ~ new_rows) -%}
        {%- do run_query('create table ' ~ new_rows ~ ' using parquet as select ' ~ columns ~ ' from ' ~ source) -%}
        {%- set session_column = config.get('lara_session_column', 'session_guid') -%}
        {%- set sessions = '(' ~ lara_sessions_this_run_select() ~ ') as recomputed' -%}
        {%- set day = lara_null_safe_date(partition_column) -%}
        {%- set rewritten_days -%}
            select distinct {{ day }} as lara_day from {{ target }}
            where {{ session_column }} in (select session_guid from {{ sessions }})
            union
            select distinct {{ day }} from {{ new_rows }}
        {%- endset -%}
        {%- do run_query('create table ' ~ batch ~ ' using parquet as'
            ~ ' select ' ~ columns ~ ' from ' ~ new_rows
            ~ ' union all select ' ~ columns ~ ' from ' ~ target
            ~ ' where ' ~ day ~ ' in (' ~ rewritten_days ~ ')'
            ~ ' and not ' ~ session_column ~ ' in (select session_guid from ' ~ sessions ~ ')'
            ~ lara_spark_not_recomputed(new_rows)) -%}
        {%- set emptied = lara_spark_emptied_days(target, batch, partition_column, rewritten_days) -%}
        {%- do run_query('drop table if exists ' ~ new_rows) -%}
    {%- elif mode == 'days' -%}
        {%- set rewritten_days = lara_days_this_run_select(config.get('lara_day_lookback', 0)) -%}
        {%- do run_query('create table ' ~ batch ~ ' using parquet as select ' ~ columns ~ ' from ' ~ source) -%}
        {%- set emptied = lara_spark_emptied_days(target, batch, partition_column, rewritten_days) -%}
    {%- else -%}
        {%- do run_query('create table ' ~ batch ~ ' using parquet as select * from ' ~ source) -%}
        {%- set emptied = [] -%}
    {%- endif -%}
    {%- for value in emptied -%}
        {%- do log('lara: ' ~ target.identifier ~ ': dropping emptied partition ' ~ partition_column ~ '=' ~ value, info=true) -%}
        {%- do run_query('alter table ' ~ target ~ ' drop if exists partition ('
            ~ partition_column ~ ' = ' ~ lara_sql_string(value) ~ ')') -%}
    {%- endfor -%}
    {#- dbt-spark sets this only for its own insert_overwrite strategy; without
        it `insert overwrite` replaces the whole table. -#}
    {%- do run_query('set spark.sql.sources.partitionOverwriteMode = DYNAMIC') -%}
    {%- do run_query('insert overwrite table ' ~ target ~ ' partition (' ~ partition_column
        ~ ') select ' ~ columns ~ ' from ' ~ batch) -%}
    drop table if exists {{ batch }}
{% endmacro %}


{% macro lara_spark_not_recomputed(source) -%}
    {#- A condition appended to the carried rows of mode sessions: with config
        lara_recompute_key, leave out the rows whose key the model recomputed
        (they are in `source`, the table of its new rows); empty otherwise. -#}
    {%- set key = config.get('lara_recompute_key') -%}
    {%- if key -%}
    {{ ' and not ' ~ key ~ ' in (select ' ~ key ~ ' from ' ~ source ~ ' where ' ~ key ~ ' is not null)' }}
    {%- endif -%}
{%- endmacro %}


{% macro lara_spark_emptied_days(target, batch, column, rewritten_days) %}
    {#- Partitions this run rewrites (`rewritten_days`, a query of dates,
        1900-01-01 standing for null) that receive no row from it: every
        session of the day moved away or lost its rows, or the day lost all
        its events. Dropped before the overwrite. -#}
    {%- set day = lara_null_safe_date(column) -%}
    {%- set query -%}
        select distinct cast({{ column }} as string) from {{ target }}
        where
            {{ column }} is not null
            and {{ day }} in ({{ rewritten_days }})
            and {{ column }} not in (select {{ column }} from {{ batch }} where {{ column }} is not null)
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{% endmacro %}


{% macro lara_null_safe_date(column) -%}
    {#- A date to match partitions on, with rows that have none mapped to 1900-01-01. -#}
    coalesce({{ column }}, cast('1900-01-01' as date))
{%- endmacro %}


{% macro lara_spark_replace_table(source, target) %}
    {#- Strategy lara_replace_table on Spark: the whole (unpartitioned) table
        overwritten from the model's query when one of its tables (config
        lara_tables) was loaded this run; else a statement that writes
        nothing (the query read no row: overwriting would empty the table). -#}
    {%- set loaded = run_query(lara_tables_loaded_select(config.require('lara_tables'))).columns[0].values()[0] -%}
    {%- if loaded -%}
        {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | join(', ') -%}
    insert overwrite table {{ target }} select {{ columns }} from {{ source }}
    {%- else -%}
        {%- do log('lara: ' ~ target.identifier ~ ': none of ' ~ (config.require('lara_tables') | join(', '))
            ~ ' loaded this run, table kept', info=true) -%}
    select 1 as lara_table_kept
    {%- endif -%}
{% endmacro %}
