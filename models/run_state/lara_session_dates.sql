{#- Every session's date, and the earliest date it has had: one row per
    session with a prompt or action in any status. `session_date` is the UTC
    date of the session's first clean prompt or action (null when none is
    left), the date lara_sessions_this_run gives the session and so the
    `_lara_session_date` every session-grained model stamps its rows with
    (lara_stamp_rows). `earliest_session_date` is the least date this table
    has held for the session: no row of a session-grained model carries an
    earlier stamp, since every stamp was once the session's `session_date`
    here. The strategy lara_replace_sessions bounds its delete by it
    (lara_session_date_bound), so a run's deletes read the days of the
    sessions it replaces instead of every row of the history.

    A session's date changes only when its own prompts or actions change, so
    an incremental run (DuckDB) recomputes the dates of the sessions of the
    prompt and action rows loaded after the last completed run (any status:
    a version quarantined today can move its session's date later) and keeps
    every other row; it replaces those rows by session (delete+insert).
    An incremental run without a completed run before it recomputes every
    session's date, still keeping the earliest. A full build, and every run
    on Spark (a table there: Parquet tables have no delete; the Spark
    strategies do not read this bound), compute every session's date, with
    `earliest_session_date` equal to it. -#}
{{ config(
    materialized='incremental' if target.type == 'duckdb' else 'table',
    unique_key='session_guid',
    incremental_strategy='delete+insert' if target.type == 'duckdb' else none,
    on_schema_change='fail'
) }}

-- depends_on: {{ ref('lara_run_limits') }}

with

{%- if is_incremental() %}

limits as (

    select * from {{ ref('lara_run_limits') }}

),
{%- endif %}

{# The prompt and action rows (any status) whose sessions' dates are
    computed: on an incremental run those loaded after the last completed
    run, since only they can change a date (a version quarantined today can
    move its session's date later), computed once; on a full build every
    row, inlined. The load-time bound is one comparison (no `or` beside it),
    so DuckDB skips the row groups loaded before it. #}
loaded as {{ lara_materialized_cte() if is_incremental() else lara_inline_cte() }} (

    {%- for table_name in ['prompts', 'actions'] %}
    select
        session_guid,
        ts
    from {{ ref('base_lara__' ~ table_name) }}
    where
        session_guid is not null
    {% if is_incremental() %}
        and _lara_loaded_at > (
            select coalesce(limits.lower_limit, cast('-infinity' as timestamp))
            from limits
        )
    {% endif %}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}

),

{# The sessions whose dates this run computes (every session on a full
    build: a session whose rows are all quarantined has a row, with no date). #}
changed as {{ lara_materialized_cte() if is_incremental() else lara_inline_cte() }} (

    select distinct session_guid
    from loaded

),

{%- if is_incremental() %}

{# The earliest time a clean event of a changed session can have: a clean
    row loaded this run is one of `loaded`; any other was clean at the run
    that last dated the session here (a row's status is set when its base
    row is written, and a rewritten row is loaded again), so it is not
    before that date. A bound on the events' time lets DuckDB skip the
    older row groups of the history (zone maps); null when nothing was
    loaded, so a run with nothing new reads no event. #}
events_from as (

    select min(bounds.event_from) as event_from
    from (
        select min(loaded.ts) as event_from
        from loaded
        union all
        select min(cast(previous.session_date as timestamp)) as event_from
        from {{ this }} as previous
        where previous.session_guid in (select changed.session_guid from changed)
    ) as bounds

),
{%- endif %}

clean_events as (

    select
        session_guid,
        prompted_at as event_at
    from {{ ref('stg_lara__prompts') }}
    union all
    select
        session_guid,
        acted_at as event_at
    from {{ ref('stg_lara__actions') }}

),

{# On an incremental run, only the changed sessions' events, from
    `events_from` on: the session filter reads `or` a full build (a scalar),
    so DuckDB checks each event against a hash table of the few changed
    sessions (a mark join) rather than, misled by its estimate of `changed`,
    hashing every event of the history. #}
dates as (

    select
        session_guid,
        cast(min(event_at) as date) as session_date
    from clean_events
    where
        session_guid is not null
    {% if is_incremental() %}
        and event_at >= (select events_from.event_from from events_from)
        and (
            (select limits.is_full_build from limits)
            or session_guid in (select changed.session_guid from changed)
        )
    {% endif %}
    group by session_guid

),

{# A changed session's earliest date: the least of its new date and the
    earliest this table held for it (a session left with no date keeps its
    earliest). On a full build the date itself. #}
final as (

    select
        changed.session_guid,
        dates.session_date,
        {%- if is_incremental() %}
        case
            when previous.earliest_session_date is null then dates.session_date
            when dates.session_date is null then previous.earliest_session_date
            when dates.session_date < previous.earliest_session_date then dates.session_date
            else previous.earliest_session_date
        end as earliest_session_date,
        {%- else %}
        dates.session_date as earliest_session_date,
        {%- endif %}
        {{ lara_run_started_at() }} as _lara_loaded_at
    from changed
    left join dates
        on changed.session_guid = dates.session_guid
    {%- if is_incremental() %}
    left join {{ this }} as previous
        on changed.session_guid = previous.session_guid
    {%- endif %}

)

select * from final
