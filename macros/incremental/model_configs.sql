{#
    The one-call config() of each kind of incremental model (session-grained,
    daily aggregate, recomputed whole), called first thing in the model in
    place of a config block, and the engine switch they share (Spark replaces
    partitions). The strategies they name: strategies.sql (DuckDB) and
    spark_strategies.sql (Spark).
#}


{% macro lara_overwrites_partitions() -%}
    {#- True where plain tables have no DELETE (Spark without Delta): the
        incremental models there replace whole partitions instead of rows
        (spark_strategies.sql). -#}
    {{ return(target.type == 'spark') }}
{%- endmacro %}


{% macro lara_spark_partition_by(column) -%}
    {#- The model config partition_by: `column` where incremental runs replace
        partitions (Spark), none elsewhere. -#}
    {{ return([column] if lara_overwrites_partitions() else none) }}
{%- endmacro %}


{% macro lara_session_grained_config(session_column='session_guid', partition_column='_lara_session_date', key=none) -%}
    {#- The config() of a session-grained model: incremental, strategy
        lara_replace_sessions (a run deletes and rewrites the rows of
        lara_sessions_this_run, matched on `session_column`), partitioned by
        `partition_column` (default _lara_session_date) where runs replace
        partitions (Spark), failing on a schema change. With `key` (a unique
        column, config lara_recompute_key), the model also recomputes rows
        of other sessions (fct_retrieval_reretrievals: the retrievals of
        lara_users_this_run's users on their days), and the strategy replaces those rows too,
        matched on `key`. Called first thing in the model, in place of a
        config block. -#}
    {%- set settings = {
        'materialized': 'incremental',
        'incremental_strategy': 'lara_replace_sessions',
        'partition_by': lara_spark_partition_by(partition_column),
        'on_schema_change': 'fail'
    } -%}
    {%- if session_column != 'session_guid' -%}
        {%- do settings.update({'lara_session_column': session_column}) -%}
    {%- endif -%}
    {%- if key is not none -%}
        {%- do settings.update({'lara_recompute_key': key}) -%}
    {%- endif -%}
    {{ config(**settings) }}
{%- endmacro %}


{% macro lara_daily_config(day_column, lookback_days=0) -%}
    {#- The config() of a daily aggregate: incremental, strategy
        lara_replace_days (a run deletes and rewrites the days of
        lara_days_this_run in `day_column`, and with `lookback_days` N the N
        days before each), partitioned by that day where runs replace
        partitions (Spark), failing on a schema change. Called first thing
        in the model, in place of a config block. -#}
    {%- set settings = {
        'materialized': 'incremental',
        'incremental_strategy': 'lara_replace_days',
        'lara_day_column': day_column,
        'partition_by': lara_spark_partition_by(day_column),
        'on_schema_change': 'fail'
    } -%}
    {%- if lookback_days != 0 -%}
        {%- do settings.update({'lara_day_lookback': lookback_days}) -%}
    {%- endif -%}
    {{ config(**settings) }}
{%- endmacro %}


{% macro lara_whole_table_config(tables=none) -%}
    {#- The config() of a model recomputed whole, and only on a run that
        loaded a row of one of the contract `tables` it reads
        (lara_tables_this_run): incremental, strategy lara_replace_table (the
        rows are replaced all at once, or left as they are), failing on a
        schema change. For the replay marts (a scheduled run seldom loads a
        replay experiment, and their percentiles are over the whole
        experiment), and for the log marts over every labelled retrieval or
        attribution, which leave `tables` out: every contract table (a run
        with nothing new keeps them). Called first thing in the model, with
        the same `tables` as its lara_tables_this_run_cte. -#}
    {{ config(
        materialized='incremental',
        incremental_strategy='lara_replace_table',
        lara_tables=lara_contract_table_names() if tables is none else tables,
        on_schema_change='fail'
    ) }}
{%- endmacro %}
