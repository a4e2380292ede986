{#- Re-retrieval before any outcome (metrics.md v2, "Added in v2"; the LARA
    paper's evidence of delayed action): one row per in-scope retrieval with
    >= 1 returned asset, and whether one of its assets was returned again by
    a later retrieval of the same user (any of the user's sessions) within
    var reretrieval_window_days, before any outcome of that user on the
    asset. Definitions and decisions: _retrieval_marts__models.yml.

    A retrieval's row depends on its user's next N days (N = the window), so
    an incremental run recomputes the retrievals of the sessions this run
    (lara_sessions_this_run) and, for each user whose events may have
    changed and each day they may have changed on (lara_users_this_run),
    that user's retrievals of the day and of the N days before it: no other
    row can change. The strategy lara_replace_sessions replaces the rows of
    those sessions and, by retrieval_id (config lara_recompute_key), the
    others recomputed. A run reads only those users' events, from each such
    day to N days after it. -#}
{%- set window_days = var('reretrieval_window_days') | int -%}
{#- Two keys in one bigint: (user key) * 2^32 + (asset key, or a
    retrieval's key within its user), both numbered from 1 and below 2^32. -#}
{%- set key_base = 4294967296 -%}
{#- The columns of a timeline event (`returns` and `asset_outcomes`), named
    on both sides of their union: a union matches columns by position, and
    user_key and unit_key are both bigints. -#}
{%- set event_columns = 'user_key, asset_id, unit_key, event_at, is_outcome' -%}
{{ lara_session_grained_config(partition_column='retrieval_date', key='retrieval_id') }}

-- depends_on: {{ ref('lara_sessions_this_run') }}
-- depends_on: {{ ref('lara_days_this_run') }}
-- depends_on: {{ ref('lara_users_this_run') }}

with

{%- if is_incremental() %}

{# On an incremental run: the sessions this run recomputes with the days
    of their rows (days_this_run), the (user, day) pairs whose units may
    change (changed_user_days: each day of lara_users_this_run and the N
    days before it), and the days whose events a unit can reach (its day
    and the N after it). #}
{{ lara_sessions_this_run_cte() }}

{{ lara_days_this_run_cte() }}

changed_user_days as (

    {{ lara_shifted_days(ref('lara_users_this_run'), range(0, -window_days - 1, -1), columns=['user_id']) }}

),

unit_days as (

    select event_date from days_this_run
    union
    select event_date from changed_user_days

),

event_days as (

    {{ lara_shifted_days('unit_days', range(window_days + 1)) }}

),
{%- endif %}

{# The units: in-scope retrievals with >= 1 returned asset of the sessions
    this run, and those of a changed user on one of its changed_user_days
    (distinct pairs: the left join adds no row). `is_unit` in
    candidate_retrievals repeats this filter as a column (a join back to
    this CTE would be moved above the asset fan-out by DuckDB's optimiser):
    change both together. #}
retrievals as (

    select
        scoped.retrieval_id,
        scoped.session_guid,
        scoped.user_id,
        scoped.surface,
        scoped.retrieval_role,
        scoped.retrieved_at,
        scoped.retrieval_date
    from {{ ref('int_retrievals_scoped') }} as scoped
    {%- if is_incremental() %}
    left join changed_user_days
        on
            scoped.user_id = changed_user_days.user_id
            and scoped.retrieval_date = changed_user_days.event_date
    {%- endif %}
    where
        scoped.is_in_tier_scope
        and not scoped.is_empty
    {% if is_incremental() %}
        and scoped.retrieval_date in (select unit_days.event_date from unit_days)
        and (
            scoped.session_guid in (select sessions_this_run.session_guid from sessions_this_run)
            or changed_user_days.user_id is not null
        )
    {% endif %}

),

{# Only the units' users' events can decide a unit's row. #}
unit_users as (

    select distinct user_id
    from retrievals
    where user_id is not null

),

{# Where a later return can come from: every non-synthetic retrieval of a
    unit's user (misrouted ones too: they showed the asset again) on the
    days a unit reaches, flagged when it is one of this run's units (the
    filter of `retrievals` as a column, so the units' keys below are read
    off the candidates, with no join to `retrievals`), and numbered within
    its user (`retrieval_key`: retrieval ids are unique, so every read
    numbers alike). Read by the user keys, the unit keys and `returns`,
    and on an incremental run by the `assets` filter. On a full build it
    holds every retrieval: inlined, not held in memory (lara_inline_cte). On an
    incremental run it is small and computed once (lara_materialized_cte):
    inlined, DuckDB (misjudging the rows the filters above leave) joined
    the (user, day) pairs after the asset fan-out, building its hash table
    on the fanned-out side, and ran out of its 3 GB at 200k events a day. #}
candidate_retrievals as {{ lara_materialized_cte() if is_incremental() else lara_inline_cte() }} (

    select
        scoped.retrieval_id,
        scoped.user_id,
        scoped.retrieved_at,
        scoped.is_in_tier_scope
        and not scoped.is_empty
        {%- if is_incremental() %}
        and (
            sessions_this_run.session_guid is not null
            or changed_user_days.user_id is not null
        )
        {%- endif %} as is_unit,
        row_number() over (
            partition by scoped.user_id
            order by scoped.retrieval_id
        ) as retrieval_key
    from {{ ref('int_retrievals_scoped') }} as scoped
    {%- if is_incremental() %}
    left join sessions_this_run
        on scoped.session_guid = sessions_this_run.session_guid
    left join changed_user_days
        on
            scoped.user_id = changed_user_days.user_id
            and scoped.retrieval_date = changed_user_days.event_date
    {%- endif %}
    where
        not scoped.is_synthetic
        and scoped.user_id is not null
    {% if is_incremental() %}
        and scoped.retrieval_date in (select event_days.event_date from event_days)
        and scoped.user_id in (select unit_users.user_id from unit_users)
    {% endif %}

),

{# The candidates' assets. On an incremental run only theirs, and within
    the candidates' times (an asset row carries its retrieval's time): the
    same rows, and the engine skips the older row groups (a bound on the
    column itself; the date of the cast does not reach DuckDB's zone maps).
    On a full build every row: `returns` joins the candidates anyway, and a
    filter by them here (a semi join on the candidates' window above) made
    DuckDB's plan for the timeline 1.5x slower at 12M events. Read twice
    (the asset keys on an incremental run, and `returns`): inlined, as
    fast as computed once there and 0.2 GB less held. #}
assets as {{ lara_inline_cte() }} (

    select
        retrieval_id,
        asset_id
    from {{ ref('int_retrieval_assets') }}
    {%- if is_incremental() %}
    where
        retrieval_id in (select candidate_retrievals.retrieval_id from candidate_retrievals)
        and {{ lara_within_times_of('candidate_retrievals') }}
    {%- endif %}

),

{# Integer keys for the timeline below: each user and each asset numbered,
    and each candidate numbered within its user (`retrieval_key`, above);
    the window's partition is a (user, asset) pair and a unit is a (user,
    retrieval) pair, each as one bigint (key_base above). A window over
    every return of the history then sorts one integer instead of two
    texts and carries an integer instead of the retrieval's id: at 12M
    events the query took half the CPU seconds (77 -> 40), with the same
    rows. The numbers only name things inside this query. The asset keys
    come from every asset of the table on a full build (one narrow scan)
    and from the candidates' assets on an incremental run. #}
user_keys as (

    select
        user_id,
        row_number() over (order by user_id) as user_key
    from (
        select distinct candidate_retrievals.user_id
        from candidate_retrievals
    ) as candidate_users

),

asset_keys as (

    select
        asset_id,
        row_number() over (order by asset_id) as asset_key
    from (
        select distinct keyed_assets.asset_id
        from {{ 'assets' if is_incremental() else ref('int_retrieval_assets') }} as keyed_assets
    ) as distinct_assets

),

{# The units' retrievals by their keys (units with no known user have none:
    never re-retrieved). #}
unit_keys as (

    select
        user_keys.user_key * {{ key_base }} + candidate_retrievals.retrieval_key as unit_key,
        candidate_retrievals.retrieval_id
    from candidate_retrievals
    inner join user_keys
        on candidate_retrievals.user_id = user_keys.user_id
    where candidate_retrievals.is_unit

),

{# Each returned asset of a candidate, by its user's key; `unit_key` only
    on the units' rows. The asset key is joined once, in `timeline`, after
    the union with `asset_outcomes` (the columns of `event_columns`): as
    fast at 12M events, full build and day's run alike. #}
returns as (

    select
        user_keys.user_key,
        assets.asset_id,
        case
            when candidate_retrievals.is_unit
                then user_keys.user_key * {{ key_base }} + candidate_retrievals.retrieval_key
        end as unit_key,
        candidate_retrievals.retrieved_at as event_at,
        false as is_outcome
    from candidate_retrievals
    inner join assets
        on candidate_retrievals.retrieval_id = assets.retrieval_id
    inner join user_keys
        on candidate_retrievals.user_id = user_keys.user_id

),

{# Outcomes on an asset: a user's export, share or download naming it as the
    consumed asset (document-level outcomes without one name no asset), in
    the span of events this run reads. #}
outcome_actions as (

    select
        session_guid,
        consumed_asset_id as asset_id,
        acted_at
    from {{ ref('int_actions_scoped') }}
    where
        actor = 'user'
        and is_outcome_type
        and consumed_asset_id is not null
    {% if is_incremental() %}
        and action_date in (select event_days.event_date from event_days)
    {% endif %}

),

{# The user of each session with such an outcome (only those sessions'
    prompts are read, not every prompt of the history), when a unit's. #}
session_users as (

    select
        session_guid,
        max(user_id) as user_id
    from {{ ref('int_prompts_scoped') }}
    where session_guid in (select outcome_actions.session_guid from outcome_actions)
    group by session_guid

),

{# By the user's key: an outcome of a user no candidate has can follow no
    return (the inner join drops only those; an asset no candidate has, the
    asset key's join in `timeline`). #}
asset_outcomes as (

    select
        user_keys.user_key,
        outcome_actions.asset_id,
        null as unit_key,
        outcome_actions.acted_at as event_at,
        true as is_outcome
    from outcome_actions
    inner join session_users
        on outcome_actions.session_guid = session_users.session_guid
    inner join user_keys
        on session_users.user_id = user_keys.user_id
    where session_users.user_id in (select unit_users.user_id from unit_users)

),

{# Each (user, asset) as a timeline of its returns and its outcomes, in one
    window (one sort, ordered by the time in microseconds): a return learns
    the first return strictly after it (a range frame from 1 microsecond
    on, so returns at the same instant are not later) and the first outcome
    at or after it (the current row's peers included, so an outcome at the
    same instant counts as between). Linear in the rows: no pairwise join
    of a user's retrievals. The rows carry integers only: the keys, and
    each time once, as its bigint of microseconds (the sort's key and the
    frames' values), turned back into a timestamp once per re-retrieved
    unit (its first later return): the window holds every return of the
    history on a full build, and a narrower row spills less. #}
timeline as (

    select
        events.user_key * {{ key_base }} + asset_keys.asset_key as pair_key,
        events.unit_key,
        {{ lara_epoch_microseconds('events.event_at') }} as event_us,
        events.is_outcome
    from (
        select {{ event_columns }} from returns
        union all
        select {{ event_columns }} from asset_outcomes
    ) as events
    inner join asset_keys
        on events.asset_id = asset_keys.asset_id

),

next_events as (

    select
        unit_key,
        event_us,
        min(case when not is_outcome then event_us end) over (
            partition by pair_key
            order by event_us
            range between 1 following and unbounded following
        ) as next_returned_us,
        min(case when is_outcome then event_us end) over (
            partition by pair_key
            order by event_us
            range between current row and unbounded following
        ) as next_outcome_us
    from timeline

),

{# A unit's asset is re-retrieved when its next return falls within the
    window and no outcome came from the retrieval to that return (both ends
    included). The window in microseconds: exact on both engines (UTC
    timestamps, whole days). #}
reretrieved_assets as (

    select
        unit_key,
        next_returned_us
    from next_events
    where
        unit_key is not null
        and event_us + {{ window_days }} * 86400000000 >= next_returned_us
        and (
            next_outcome_us is null
            or next_outcome_us > next_returned_us
        )

),

{# Per unit, then back to its retrieval id. #}
reretrieved as (

    select
        unit_keys.retrieval_id,
        per_unit.reretrieved_asset_count,
        per_unit.first_reretrieved_at
    from (
        select
            unit_key,
            count(*) as reretrieved_asset_count,
            {{ lara_timestamp_from_epoch_microseconds('min(next_returned_us)') }} as first_reretrieved_at
        from reretrieved_assets
        group by unit_key
    ) as per_unit
    inner join unit_keys
        on per_unit.unit_key = unit_keys.unit_key

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        retrievals.retrieval_date,
        retrievals.surface,
        retrievals.retrieval_role,
        retrievals.retrieved_at,
        retrievals.user_id is not null as has_known_user,
        coalesce(reretrieved.reretrieved_asset_count, 0) > 0 as is_reretrieved,
        cast(coalesce(reretrieved.reretrieved_asset_count, 0) as bigint) as reretrieved_asset_count,
        reretrieved.first_reretrieved_at,
        {{ window_days }} as reretrieval_window_days,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from retrievals
    left join reretrieved
        on retrievals.retrieval_id = reretrieved.retrieval_id

)

select * from final
