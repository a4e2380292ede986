{#
    Incremental models on Spark. Plain Parquet tables (no Delta or Iceberg
    here) have no DELETE, so the project's two strategies replace whole
    partitions instead of rows, with dynamic partition overwrite:

    lara_replace_partitions (base models, partition `_partition_value`, the
        raw file's dt= folder): a run rewrites every pending partition and
        every partition holding an earlier version of a key it re-judges
        (stage_source.sql carries that partition's other rows unchanged).
    lara_replace_sessions (session-grained models, partition
        `_lara_session_date`): the model's pre-hook
        (lara_stage_affected_sessions) stages the affected sessions widened
        to every session of each day that holds one, by its date before and
        after the run, in `<model>__lara_sessions`, so every partition
        written is complete; a partition whose sessions all moved away or
        lost their rows (a prompt turned out to be a conflicting duplicate)
        is dropped.

    Both first write the recomputed rows to `<model>__lara_batch` (the temp
    view dbt creates reads the model's own table, for its watermark and its
    earlier rows, and the partitions to drop are known only once the rows
    are), then drop emptied partitions, then `insert overwrite` from the
    batch; the statement dbt runs last drops the batch table.

    dbt-spark validates the strategy name against its own list and has no
    hook for custom strategies, so the two adapter macros below are
    overridden by name (a root project's macros win over an adapter's) and
    fall back to the adapter's behaviour for every other strategy.
#}

{% macro lara_spark_strategies() %}
    {{ return(['lara_replace_partitions', 'lara_replace_sessions']) }}
{% endmacro %}


{#- The two overrides below replace dbt-spark's macros of the same name
    (internal packages cannot be called by package name), so for every other
    strategy they do what dbt-spark 1.11 does: same checks, same SQL macros.
    `dbt run-operation lara_check_spark_strategy_overrides` (test_spark.py)
    checks that. -#}
{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
    {%- set adapter_strategies = ['append', 'merge', 'insert_overwrite', 'microbatch'] -%}
    {%- if raw_strategy in lara_spark_strategies() -%}
        {%- if not config.get('partition_by') -%}
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
        {{ lara_spark_replace_partitions(source, target, drop_emptied_session_days=true) }}
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


{% macro lara_spark_replace_partitions(source, target, drop_emptied_session_days=false) %}
    {#- Runs the replacement and returns the statement that drops the batch. -#}
    {%- set batch = target.incorporate(path={'identifier': target.identifier ~ '__lara_batch'}) -%}
    {%- set partition_by = config.get('partition_by') -%}
    {%- set partition_columns = [partition_by] if partition_by is string else partition_by -%}
    {%- do run_query('drop table if exists ' ~ batch) -%}
    {%- do run_query('create table ' ~ batch ~ ' using parquet as select * from ' ~ source) -%}
    {%- if drop_emptied_session_days -%}
        {%- set emptied = lara_spark_emptied_session_days(target, batch, partition_columns[0]) -%}
        {%- for value in emptied -%}
            {%- do log('lara: ' ~ target.identifier ~ ': dropping emptied partition '
                ~ partition_columns[0] ~ '=' ~ value, info=true) -%}
            {%- do run_query('alter table ' ~ target ~ ' drop if exists partition ('
                ~ partition_columns[0] ~ " = '" ~ value ~ "')") -%}
        {%- endfor -%}
    {%- endif -%}
    {#- dbt-spark sets this only for its own insert_overwrite strategy; without
        it `insert overwrite` replaces the whole table. -#}
    {%- do run_query('set spark.sql.sources.partitionOverwriteMode = DYNAMIC') -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | join(', ') -%}
    {%- do run_query('insert overwrite table ' ~ target ~ ' partition ('
        ~ (partition_columns | join(', ')) ~ ') select ' ~ columns ~ ' from ' ~ batch) -%}
    {%- if drop_emptied_session_days -%}
        {%- for suffix in ['__lara_sessions', '__lara_touched', '__lara_closure'] -%}
            {%- do run_query('drop table if exists '
                ~ target.incorporate(path={'identifier': target.identifier ~ suffix})) -%}
        {%- endfor -%}
    {%- endif -%}
    drop table if exists {{ batch }}
{% endmacro %}


{% macro lara_spark_emptied_session_days(target, batch, column) %}
    {#- Days that held a session recomputed by this run (the staged, widened
        affected sessions) and receive no row now. -#}
    {%- set session_column = config.get('lara_session_column', 'session_guid') -%}
    {%- set query -%}
        select distinct cast({{ column }} as string) from {{ target }}
        where
            {{ column }} is not null
            and {{ session_column }} in (
                select session_guid from {{ lara_staged_sessions_relation(target) }}
            )
            and {{ column }} not in (select {{ column }} from {{ batch }} where {{ column }} is not null)
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{% endmacro %}
