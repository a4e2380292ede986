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
    filter of `retrievals` as a column, so the timeline below carries the
    unit's id and no join back to the units is needed). Read twice (the
    `assets` filter and `returns`). On a full build it holds every
    retrieval: inlined, not held in memory (lara_inline_cte). On an
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
        {%- endif %} as is_unit
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

{# The candidates' assets. On an incremental run also within the
    candidates' times (an asset row carries its retrieval's time): the same
    rows, and the engine skips the older row groups (a bound on the column
    itself; the date of the cast does not reach DuckDB's zone maps). #}
assets as (

    select
        retrieval_id,
        asset_id
    from {{ ref('int_retrieval_assets') }}
    where
        retrieval_id in (select candidate_retrievals.retrieval_id from candidate_retrievals)
    {% if is_incremental() %}
        and {{ lara_within_times_of('candidate_retrievals') }}
    {% endif %}

),

{# Each returned asset of a candidate; `unit_retrieval_id` only on the
    units' rows (units with no known user have none: never re-retrieved). #}
returns as (

    select
        case
            when candidate_retrievals.is_unit then candidate_retrievals.retrieval_id
        end as unit_retrieval_id,
        candidate_retrievals.user_id,
        candidate_retrievals.retrieved_at,
        assets.asset_id
    from candidate_retrievals
    inner join assets
        on candidate_retrievals.retrieval_id = assets.retrieval_id

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

asset_outcomes as (

    select
        session_users.user_id,
        outcome_actions.asset_id,
        outcome_actions.acted_at
    from outcome_actions
    inner join session_users
        on outcome_actions.session_guid = session_users.session_guid
    where session_users.user_id in (select unit_users.user_id from unit_users)

),

{# Each (user, asset) as a timeline of its returns and its outcomes, in one
    window (one sort, ordered by the time in microseconds): a return learns
    the first return strictly after it (a range frame from 1 microsecond
    on, so returns at the same instant are not later) and the first outcome
    at or after it (the current row's peers included, so an outcome at the
    same instant counts as between). Linear in the rows: no pairwise join
    of a user's retrievals, and no join back to the units. The rows carry
    each time once, as its bigint of microseconds (the sort's key and the
    frames' values), turned back into a timestamp once per re-retrieved
    unit (its first later return): the window holds every return of the
    history on a full build, and a narrower row spills less. #}
timeline as (

    select
        user_id,
        asset_id,
        unit_retrieval_id,
        {{ lara_epoch_microseconds('retrieved_at') }} as event_us,
        false as is_outcome
    from returns
    union all
    select
        user_id,
        asset_id,
        null as unit_retrieval_id,
        {{ lara_epoch_microseconds('acted_at') }} as event_us,
        true as is_outcome
    from asset_outcomes

),

next_events as (

    select
        unit_retrieval_id,
        event_us,
        min(case when not is_outcome then event_us end) over (
            partition by user_id, asset_id
            order by event_us
            range between 1 following and unbounded following
        ) as next_returned_us,
        min(case when is_outcome then event_us end) over (
            partition by user_id, asset_id
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
        unit_retrieval_id as retrieval_id,
        next_returned_us
    from next_events
    where
        unit_retrieval_id is not null
        and event_us + {{ window_days }} * 86400000000 >= next_returned_us
        and (
            next_outcome_us is null
            or next_outcome_us > next_returned_us
        )

),

reretrieved as (

    select
        retrieval_id,
        count(*) as reretrieved_asset_count,
        {{ lara_timestamp_from_epoch_microseconds('min(next_returned_us)') }} as first_reretrieved_at
    from reretrieved_assets
    group by retrieval_id

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
