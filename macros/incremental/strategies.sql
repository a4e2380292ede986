{#
    The custom incremental strategies on DuckDB (Spark: spark_strategies.sql):
    lara_replace_sessions (session-grained models), lara_replace_table
    (models recomputed whole) and lara_replace_days (daily aggregates, see
    days_this_run.sql). Each replaces exactly the rows the model recomputed.
#}


{#
    Custom incremental strategy `lara_replace_sessions`: delete every row of
    the sessions this run recomputes (also sessions that now produce no rows
    at all, e.g. when their only prompt turned out to be a conflicting
    duplicate), then insert the recomputed rows. The session column is the
    model config `lara_session_column` (default session_guid). With config
    `lara_recompute_key`, the rows of other sessions whose key the model
    recomputed are deleted too.
#}
{% macro get_incremental_lara_replace_sessions_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set column = config.get('lara_session_column', 'session_guid') -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set key = config.get('lara_recompute_key') %}
    {%- if lara_is_bulk_run() %}
    {#- a bulk run recomputed every row (macros/incremental/bulk.sql) #}
    delete from {{ target }};
    {%- else %}
    {%- set bound = lara_session_date_bound(arg_dict['dest_columns'] | map(attribute='name') | list) %}
    delete from {{ target }}
    where
        ({{ column }} in (select session_guid from ({{ lara_sessions_this_run_select() }}) as recomputed)
        {%- if bound %}
            and (_lara_session_date >= {{ bound }} or _lara_session_date is null)
        {%- endif %})
        {%- if key %}
        or {{ key }} in (select {{ key }} from {{ arg_dict['temp_relation'] }})
        {%- endif %};
    {%- endif %}
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{% macro lara_session_date_bound(columns) %}
    {#- The least `_lara_session_date` a row of the sessions this run
        recomputes can carry, as a date literal for the delete of strategy
        lara_replace_sessions, or none (no bound): the earliest date
        lara_session_dates has held for any of those sessions
        (lara_sessions_this_run.earliest_session_date). Every stamp was once
        its session's date there, and that earliest date never moves later,
        so the bounded delete removes the same rows; DuckDB then skips the
        row groups of older days (zone maps) instead of probing the session
        column of every row of the history. None when the model has no
        `_lara_session_date` column (`columns`: its column names), when no
        session this run has a date, and at parse time. Rows without a date
        are always in reach (`or _lara_session_date is null`).

        Also none when lara_session_dates was rebuilt after the last completed
        run (no row of it written by then: a `--full-refresh` of that model
        alone, or its first build on an existing warehouse). A rebuild starts
        every earliest date afresh, so after a run that failed between the
        two (dates recorded, a model not yet replaced) a model may hold rows
        stamped earlier than the earliest date now held. Those sessions are
        in every run until one completes (the watermark stays), so the runs
        until then delete without the bound, and find those rows. -#}
    {%- if not execute or '_lara_session_date' not in (columns | map('lower') | list) -%}
        {{ return(none) }}
    {%- endif -%}
    {#- Not ref(): the models using the strategy do not depend on these two
        (lara_sessions_this_run, which they do, is built after both). -#}
    {%- set session_dates = lara_run_state_relation('lara_session_dates') -%}
    {%- set run_limits = lara_run_state_relation('lara_run_limits') -%}
    {%- if session_dates is none or run_limits is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set query -%}
        select cast(min(run_sessions.earliest_session_date) as {{ dbt.type_string() }})
        from {{ ref('lara_sessions_this_run') }} as run_sessions
        where
            {{ lara_recomputed_here() }}
            and exists (
                select 1
                from {{ session_dates }} as session_dates
                where session_dates._lara_loaded_at <= (
                    select run_limits.lower_limit from {{ run_limits }} as run_limits
                )
            )
    {%- endset -%}
    {%- set earliest = run_query(query).columns[0].values()[0] -%}
    {{ return(("cast(" ~ lara_sql_string(earliest) ~ " as date)") if earliest else none) }}
{% endmacro %}


{#
    Custom incremental strategy `lara_replace_table` (models configured by
    lara_whole_table_config): on a run that loaded one of the model's tables
    (config lara_tables), delete every row and insert the recomputed table;
    on any other run the model read no row and the table stays as it is.
#}
{% macro get_incremental_lara_replace_table_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where ({{ lara_tables_loaded_select(config.require('lara_tables')) }});
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
    where ({{ lara_tables_loaded_select(config.require('lara_tables')) }})
{% endmacro %}


{% macro get_incremental_lara_replace_days_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set column = config.require('lara_day_column') -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where
        {{ column }} is null
        or {{ column }} in ({{ lara_days_this_run_select(config.get('lara_day_lookback', 0)) }});
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}
