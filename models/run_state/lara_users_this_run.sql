{#- The users whose events this run may change, and the days of those
    events: one row per user and day. For every session with a row loaded
    this run (lara_sessions_this_run, reason `loaded`; every session on a
    full build), each user named by one of its prompts, or by a prompt that
    one of its retrievals names, in any version and status, with each UTC
    date on which the session logs a prompt, retrieval or action in any
    version and status. A retrieval's user is its prompt's
    (int_retrievals_scoped), and base keeps the version a run replaces (a
    tombstone, status `removed`, for one run; both versions of a conflict),
    so a session moved from one user to another lists both, on the days of
    its old rows and of its new ones.

    Read by the models whose row depends on its user's other sessions
    (fct_retrieval_reretrievals): a user's events can change only on these
    days, so only that user's rows reaching them can change. Sessions
    recomputed through lineage or for a label only are left out: none of
    their own rows changed. A row with no parsed time has no day and is
    left out: it is not clean, so it adds no event, and the version it
    replaces is kept in base with its own time. -#}
{{ config(materialized='table') }}

with

sessions as (

    select session_guid
    from {{ ref('lara_sessions_this_run') }}
    where reason in ('loaded', 'full_build')

),

prompts as (

    select
        session_guid,
        user_id,
        ts
    from {{ ref('base_lara__prompts') }}
    where session_guid in (select sessions.session_guid from sessions)

),

retrievals as (

    select
        session_guid,
        prompt_id,
        ts
    from {{ ref('base_lara__retrievals') }}
    where session_guid in (select sessions.session_guid from sessions)

),

{# A retrieval's user is the user of the prompt it names, which may be
    logged in another session. #}
session_users as (

    select
        session_guid,
        user_id
    from prompts
    where user_id is not null
    union
    select
        retrievals.session_guid,
        named_prompts.user_id
    from retrievals
    inner join {{ ref('base_lara__prompts') }} as named_prompts
        on retrievals.prompt_id = named_prompts.prompt_id
    where named_prompts.user_id is not null

),

session_days as (

    select
        session_guid,
        cast(ts as date) as event_date
    from prompts
    where ts is not null
    union
    select
        session_guid,
        cast(ts as date) as event_date
    from retrievals
    where ts is not null
    union
    select
        session_guid,
        cast(ts as date) as event_date
    from {{ ref('base_lara__actions') }}
    where
        session_guid in (select sessions.session_guid from sessions)
        and ts is not null

),

final as (

    select distinct
        session_users.user_id,
        session_days.event_date
    from session_users
    inner join session_days
        on session_users.session_guid = session_days.session_guid

)

select * from final
