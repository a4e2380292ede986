{#- One row per session_guid seen in clean prompts or actions: the UTC date of
    its first event. The session-grained incremental models carry it as
    `_lara_session_date`, their partition column on Spark, where an
    incremental run replaces whole session days (macros/spark/incremental.sql).
    Synthetic sessions included: it is bookkeeping, not a metric. -#}
with

events as (

    select
        session_guid,
        prompted_at as event_at
    from {{ ref('stg_lara__prompts') }}
    union all
    select
        session_guid,
        acted_at as event_at
    from {{ ref('stg_lara__actions') }}

)

select
    session_guid,
    cast(min(event_at) as date) as session_date
from events
where session_guid is not null
group by session_guid
