{#- Attribution rule 1 (`direct`, metrics.md): one row per action, with the
    retrieval its source_retrieval_id names when that is a known retrieval
    (any clean row of the retrievals table, any session). A source id that
    names no known retrieval "counts as missing (rules 2-4 apply)": flag
    `has_unknown_source_id`, no direct source. Every later rule reads this
    model: it carries the action columns they need.

    Session-grained and incremental (strategy lara_replace_sessions, session
    column session_guid of the action): a run recomputes the actions of
    lara_sessions_this_run. An action whose source retrieval arrives late is
    among them (the closure adds the sessions of actions naming a retrieval
    of a touched session). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

actions as (

    select
        action_id,
        session_guid,
        prompt_id,
        actor,
        action_type,
        consumed_asset_id,
        source_retrieval_id,
        document_id,
        acted_at,
        action_date,
        is_outcome_type,
        has_known_prompt,
        is_synthetic
    from {{ ref('int_actions_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

retrievals as (

    select retrieval_id
    from {{ ref('int_retrievals_scoped') }}
    {%- if is_incremental() %}
    where retrieval_id in (select source_retrieval_id from actions)
    {%- endif %}

),

direct_sources as (

    {{ lara_resolve_direct_source('actions', 'retrievals') }}

)

{{ lara_stamp_rows('direct_sources') }}
