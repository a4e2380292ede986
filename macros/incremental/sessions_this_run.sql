{#
    What a session-grained model does with lara_sessions_this_run (its rows:
    session_closure.sql): the sessions it recomputes (lara_recomputed_here,
    lara_sessions_this_run_select), its import CTE, the filters of its
    inputs, and the stamp on its rows. The run state as a whole:
    run_state.sql.
#}


{% macro lara_recomputed_here() -%}
    {#- A where-clause term over lara_sessions_this_run or lara_days_this_run:
        the sessions (days) the model being built recomputes: those every
        model recomputes (`is_for_every_model`) and those touched by a label
        table in the model's lineage (lara_label_tables_read). True on a full
        build (every session and day; and unit tests, whose stand-in run
        state may lack the columns). The relation it filters needs an alias:
        Spark reads `from t where (c)` as table `t` aliased `where` with
        column list `(c)`. -#}
    {%- if is_incremental() -%}
    {%- set terms = ['is_for_every_model'] -%}
    {%- for table_name in lara_label_tables_read() -%}
        {%- do terms.append('has_loaded_' ~ table_name) -%}
    {%- endfor -%}
    ({{ terms | join(' or ') }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_sessions_this_run_select() -%}
    {#- select session_guid, session_date: the sessions of lara_sessions_this_run
        the model being built recomputes (lara_recomputed_here). The model's
        import CTE and its strategy (DuckDB and Spark) both use it, so a run
        replaces exactly the sessions it recomputed. -#}
    select
        run_sessions.session_guid,
        run_sessions.session_date
    from {{ ref('lara_sessions_this_run') }} as run_sessions
    where {{ lara_recomputed_here() }}
{%- endmacro %}


{% macro lara_sessions_this_run_cte() -%}
    {#- The import CTE every session-grained model opens with:
        `sessions_this_run` (session_guid, session_date): on an incremental
        run the sessions it recomputes (lara_sessions_this_run_select). The
        ref() is unconditional, so dbt draws the edge on every build. -#}
sessions_this_run as (

    {{ lara_sessions_this_run_select() }}

),
{%- endmacro %}


{% macro lara_in_sessions_this_run(column) -%}
    {#- A where-clause term over the `sessions_this_run` CTE: true on a full
        build, else only the sessions this run recomputes. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select session_guid from sessions_this_run)
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_events_this_run(column, event_time) -%}
    {#- lara_in_sessions_this_run for a read of the clean prompts or actions
        (stg_lara__prompts, stg_lara__actions) by their session `column`, with
        `event_time` their timestamp: also on or after the earliest date of
        the sessions this run recomputes. The same rows as the session filter
        alone: a session's date is the UTC date of its first clean prompt or
        action (lara_session_dates, recomputed from the same views whenever
        the session's prompts or actions change), so none of them is earlier; a session without a date has no clean
        prompt or action to read (and a clean row always has its time). The
        bound lets DuckDB skip the older row groups of the base table (zone
        maps) instead of probing every event of the history: at 120 days of
        100k events the actions' read took 0.16 s instead of 0.34
        (docs/performance-notes.md, "What grows with the history"). -#}
    {%- if is_incremental() -%}
    ({{ lara_in_sessions_this_run(column) }}
        and {{ event_time }} >= (select min(sessions_this_run.session_date) from sessions_this_run))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_rows_since_first(relation, time_column, column='session_guid') -%}
    {#- lara_in_sessions_this_run for a read of `relation` by its session
        `column`, also keeping `time_column` on or after the earliest
        `time_column` of those sessions' rows in `relation`: the same rows
        when `time_column` is never null (a contract table's time, required on
        every clean row). The minimum reads two narrow columns of the
        relation; the read itself then skips the older row groups (DuckDB's
        zone maps) instead of reading every wide row of the history and
        dropping it at the session filter. For the clean retrievals, whose
        time is not part of their session's date: at 120 days of 100k events
        `int_retrievals_scoped`'s query took 0.39 and 0.53 s instead of 1.7
        and 2.2, with a CI run on the host (docs/performance-notes.md, "What grows
        with the history"). -#}
    {%- if is_incremental() -%}
    ({{ lara_in_sessions_this_run(column) }}
        and {{ time_column }} >= (
            select min(run_rows.{{ time_column }})
            from {{ relation }} as run_rows
            where {{ lara_in_sessions_this_run('run_rows.' ~ column) }}
        ))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_within_times_of(relation, time_column='retrieved_at', relation_time_column=none) -%}
    {#- A where-clause term for a read by id (`id in (select id from
        relation)`) of rows that carry the time of the rows of `relation` they
        match (a retrieval's assets, its scoped row): `time_column` between the
        earliest and the latest `relation_time_column` (default the same
        name) of `relation`. The same rows; DuckDB's zone maps then skip the
        row groups outside those times, which a semi-join on an id cannot. True
        on a full build. -#}
    {%- if is_incremental() -%}
    {%- set relation_time_column = relation_time_column or time_column -%}
    ({{ time_column }} >= (select min({{ relation }}.{{ relation_time_column }}) from {{ relation }})
        and {{ time_column }} <= (select max({{ relation }}.{{ relation_time_column }}) from {{ relation }}))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_rows_this_run(column='session_guid') -%}
    {#- lara_in_sessions_this_run for a read of a session-grained model's
        rows (stamped by lara_stamp_rows on the same session column):
        `column` is that column, optionally qualified (`alias.session_guid`),
        and the rows' `_lara_session_date` (same qualifier) must be a date of
        the sessions this run, or null (a session with no clean prompt or
        action). The same rows as the session filter alone: a session's date
        changes only when its prompts or actions do, and then every model
        recomputes (and restamps) it. The date filter lets the engine skip
        the other days' data: DuckDB pushes the join's date range into the
        scan (zone maps), Spark prunes `_lara_session_date` partitions. -#}
    {%- if is_incremental() -%}
    {%- set qualifier = column.rsplit('.', 1)[0] ~ '.' if '.' in column else '' -%}
    {%- set session_date = qualifier ~ '_lara_session_date' -%}
    ({{ lara_in_sessions_this_run(column) }}
        and ({{ session_date }} in (select session_date from sessions_this_run) or {{ session_date }} is null))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_prompts_of(relation, column='prompt_id') -%}
    {#- A where-clause term keeping the rows whose `column` (default
        prompt_id) is a prompt of the rows of `relation` (a CTE with a
        prompt_id column): true on a full build, else the rows of those
        prompts in any session. A retrieval's prompt may be logged in another
        session (exports from the editor), which the run need not recompute,
        so a model reads its retrievals' prompt-side rows, and its prompts'
        retrievals, by prompt_id rather than by the sessions this run. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select {{ relation }}.prompt_id from {{ relation }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_stamp_rows(cte, session_column='session_guid') %}
    {#- The final select of a session-grained incremental model: the rows of
        `cte` with their bookkeeping columns, `_lara_loaded_at` (this run) and
        `_lara_session_date` (the date of the row's session, `session_column`,
        the model's lara_session_column; the partition column on Spark). -#}
select
    {{ cte }}.*,
    {{ lara_run_started_at() }} as _lara_loaded_at,
    sessions_this_run.session_date as _lara_session_date
from {{ cte }}
left join sessions_this_run
    on {{ cte }}.{{ session_column }} = sessions_this_run.session_guid
{% endmacro %}
