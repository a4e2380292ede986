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


{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
    {%- if raw_strategy in lara_spark_strategies() -%}
        {%- if not config.get('partition_by') -%}
            {{ exceptions.raise_compiler_error(
                "lara: incremental strategy '" ~ raw_strategy ~ "' needs a partition_by config") }}
        {%- endif -%}
        {{ return(raw_strategy) }}
    {%- endif -%}
    {{ return(dbt_spark.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
{% endmacro %}


{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {%- if strategy == 'lara_replace_partitions' -%}
        {{ lara_spark_replace_partitions(source, target) }}
    {%- elif strategy == 'lara_replace_sessions' -%}
        {{ lara_spark_replace_partitions(source, target, drop_emptied_session_days=true) }}
    {%- else -%}
        {{ dbt_spark.dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) }}
    {%- endif -%}
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
