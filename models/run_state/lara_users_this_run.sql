{#- The users whose events this run may change: every user named by a
    prompt of a session with a row loaded this run (lara_sessions_this_run,
    reason `loaded`; every session on a full build), in any version and
    status, and every user of a prompt that a retrieval of such a session
    names, in any version. A retrieval's user is its prompt's
    (int_retrievals_scoped), and base keeps the version a run replaces (a
    tombstone, status `removed`, for one run; both versions of a conflict),
    so a session moved from one user to another this run lists both.

    Read by the models whose row depends on its user's other sessions
    (fct_retrieval_reretrievals): the rows of other users cannot change.
    Sessions recomputed through lineage or for a label only are left out:
    none of their own rows changed. -#}
{{ config(materialized='table') }}

with

sessions as (

    select session_guid
    from {{ ref('lara_sessions_this_run') }}
    where reason in ('loaded', 'full_build')

),

named_prompts as (

    select prompt_id
    from {{ ref('base_lara__retrievals') }}
    where
        session_guid in (select sessions.session_guid from sessions)
        and prompt_id is not null

),

final as (

    select distinct user_id
    from {{ ref('base_lara__prompts') }}
    where
        user_id is not null
        and (
            session_guid in (select sessions.session_guid from sessions)
            or prompt_id in (select named_prompts.prompt_id from named_prompts)
        )

)

select * from final
