{#- The sessions this run recomputes, one row each, with the session's date
    (UTC date of its first clean prompt or action: `_lara_session_date` of
    every session-grained model, their partition column on Spark) and why
    it is recomputed:
    - `full_build`: a full build recomputes every session with a row in
      any status;
    - `loaded`: a prompt, action or retrieval of the session, or a prompt
      label of one of its prompts, was loaded after the last completed run
      (lara_run_limits.lower_limit), in any status (a version quarantined
      today removes yesterday's row);
    - `label`: only a goal or relevance label or a stage span of the
      session was loaded (they change the session's own rows only);
    - `lineage`: reached from a touched session through lineage
      (macros/incremental/session_closure.sql, lara_lineage_closure_select):
      actions naming its retrievals or prompts, every action of the
      documents they touched, and the sessions of the retrievals those
      actions name, so that a late export updates the Tier 3 row of the
      retrieval it credits, in whatever session that retrieval was; and the
      sessions of the retrievals naming one of its prompts, so that a late
      prompt gives its user, surface and scope to a retrieval of another
      session; and the prompt sessions of the retrievals of touched sessions
      and of the retrievals those actions name, so that a prompt's row
      (fct_prompts: use evidence, outcomes) follows a retrieval of it logged
      in another session; and the sessions of the retrievals of the prompts
      that new actions name, so that a user reject or an agent action
      logged in another session than its prompt reaches the prompt's
      retrievals.
    `is_for_every_model` (every reason but `label`) and one
    `has_loaded_<table>` flag per label table (lara_label_tables) say which
    models recompute the session: every session-grained model ref()s this
    model and recomputes and replaces the sessions for every model plus
    those touched by a label table in its own lineage (strategy
    lara_replace_sessions, macro lara_sessions_this_run_select): a session
    touched only by relevance labels is not recomputed by models that never
    read them. -#}
{{ config(materialized='table') }}

{%- set limits = ref('lara_run_limits') %}

{#- The base tables the closure reads, drawn as edges on every build. #}
{%- for table_name in lara_session_tables() %}
-- depends_on: {{ ref('base_lara__' ~ table_name) }}
{%- endfor %}

{#- Checked on every build and at parse time, not only by incremental runs. #}
{%- set bulk_run_share = lara_bulk_run_share() -%}

{%- set is_full_build = true -%}
{%- if execute and load_relation(limits) is not none -%}
    {%- set is_full_build = run_query('select is_full_build from ' ~ limits).columns[0].values()[0] -%}
{%- endif %}

{#- The session of every row of the event tables, in any status. -#}
{%- set base_session_rows -%}
{%- for table_name in ['prompts', 'retrievals', 'actions'] %}
select session_guid from {{ ref('base_lara__' ~ table_name) }}
{%- if not loop.last %}
union all
{%- endif %}
{%- endfor %}
{%- endset %}

with

{% if is_full_build -%}
{#- Every session with a row in any status: a session whose rows are all
    quarantined now still has rows from an earlier build to remove. -#}
sessions as (

    select distinct
        base_rows.session_guid,
        'full_build' as reason
    from ({{ base_session_rows }}) as base_rows
    where base_rows.session_guid is not null

),
{%- else -%}
touched as {{ lara_materialized_cte() }} (

    {{ lara_touched_sessions_select('(select lower_limit from ' ~ limits ~ ')') }}

),

closure as {{ lara_materialized_cte() }} (

    {{ lara_lineage_closure_select('touched') }}

),

{#- A bulk run (macros/incremental/bulk.sql; DuckDB only): the closure holds
    at least one session and at least var lara_bulk_run_share of the
    sessions (counted approximately over the prompts: a threshold, not a
    result), so every session with a row is recomputed, as on a full build,
    with reason `bulk`. A run that touches no session is never one, even
    when the share is 0 or the warehouse has no prompt yet. -#}
{%- if target.type == 'duckdb' %}
is_bulk as (

    select
        counted.closure_sessions > 0
        and counted.closure_sessions >= {{ bulk_run_share }} * counted.prompt_sessions as is_bulk_run
    from (
        select
            (select count(*) from closure) as closure_sessions,
            (
                select approx_count_distinct(session_guid) from {{ ref('base_lara__prompts') }}
            ) as prompt_sessions
    ) as counted

),

all_sessions as (

    select distinct base_rows.session_guid
    from ({{ base_session_rows }}) as base_rows
    where
        base_rows.session_guid is not null
        and (select is_bulk.is_bulk_run from is_bulk)

),

sessions as (

    select
        closure.session_guid,
        closure.reason
    from closure
    where not (select is_bulk.is_bulk_run from is_bulk)
    union all
    select
        all_sessions.session_guid,
        'bulk' as reason
    from all_sessions

),
{%- else %}
sessions as (

    select * from closure

),
{%- endif %}

label_flags as (

    select
        {% for table_name in lara_label_tables() -%}
        max(case when table_name = '{{ table_name }}' then 1 else 0 end) = 1 as has_loaded_{{ table_name }},
        {% endfor -%}
        session_guid
    from touched
    where session_guid is not null
    group by session_guid

),
{%- endif %}

{# The sessions' dates, kept by lara_session_dates (a session's date
    changes only when its prompts or actions do, and that model recomputes
    those): one join, no read of the events here. #}
session_dates as (

    select
        session_guid,
        session_date,
        earliest_session_date
    from {{ ref('lara_session_dates') }}

),

final as (

    select
        sessions.session_guid,
        session_dates.session_date,
        session_dates.earliest_session_date,
        sessions.reason,
        {% for table_name in lara_label_tables() -%}
        {{ 'false' if is_full_build else 'coalesce(label_flags.has_loaded_' ~ table_name ~ ', false)' }}
            as has_loaded_{{ table_name }},
        {% endfor -%}
        sessions.reason != 'label' as is_for_every_model
    from sessions
    left join session_dates
        on sessions.session_guid = session_dates.session_guid
    {%- if not is_full_build %}
    left join label_flags
        on sessions.session_guid = label_flags.session_guid
    {%- endif %}

)

select * from final
