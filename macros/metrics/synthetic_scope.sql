{#- Synthetic scope (metrics.md, scope rules, v2): the unit is the prompt.
    A session is synthetic by itself only when it has prompts and every one
    of them is synthetic; a session without prompts is not.

    lara_synthetic_sessions(prompts): the body of a CTE, one row per
    session_guid of `prompts` (a relation or CTE with session_guid and a
    non-null boolean is_synthetic) with
        is_synthetic_session  every prompt of the session is synthetic
    Retrievals and actions whose prompt is unknown (no prompt_id, or one the
    prompts table does not hold) inherit it. -#}
{% macro lara_synthetic_sessions(prompts) -%}
    select
        session_guid,
        min(case when is_synthetic then 1 else 0 end) = 1 as is_synthetic_session
    from {{ prompts }}
    group by session_guid
{%- endmacro %}

{#- lara_lineage_synthetic_actions(where='true'): the body of a CTE, the
    action_id of every action that hangs off synthetic traffic by lineage
    (int_action_attributions.is_action_synthetic: its prompt is synthetic, or
    without a known prompt its source id or its placement chain leads to a
    synthetic retrieval). int_actions_scoped cannot see placement chains (they
    are resolved after it); readers of int_actions_scoped that count actions
    as in scope left-join this. -#}
{% macro lara_lineage_synthetic_actions(where='true') -%}
    select distinct action_id
    from {{ ref('int_action_attributions') }}
    where is_action_synthetic and ({{ where }})
{%- endmacro %}

{#- lara_event_prompts(events): the body of a CTE, the rows of
    int_prompts_scoped that scope the events of `events` (a CTE with
    prompt_id and session_guid: the retrievals or actions of a run): their
    own prompts, and every prompt of their sessions, which an event without a
    known prompt is scoped by (lara_synthetic_sessions). On incremental runs
    only those; every prompt on a full build. -#}
{% macro lara_event_prompts(events) -%}
    select * from {{ ref('int_prompts_scoped') }}
    {%- if is_incremental() %}
    where
        prompt_id in (select prompt_id from {{ events }})
        or session_guid in (select session_guid from {{ events }})
    {%- endif %}
{%- endmacro %}
