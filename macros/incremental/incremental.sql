{#
    Incremental runs. The base models load new raw rows and stamp each row
    with `_lara_loaded_at` (when its content or status last changed). The
    session-grained models downstream (int_action_attributions,
    int_retrieval_signals and the facts) then recompute whole *affected
    sessions*, as the Snowplow packages reprocess whole sessions:

    1. touched sessions: sessions with a prompt, action or retrieval
       loaded after the model's watermark (rows of any status: a version
       quarantined today removes yesterday's row);
    2. lineage, forwards and backwards: actions of touched sessions, actions
       naming a retrieval of a touched session, and every action in the
       documents those actions touched (placement chains and document
       credits live in a document);
    3. affected sessions = touched sessions, the sessions of those actions,
       and the sessions of the retrievals those actions name; plus the
       sessions with a newly loaded label of a table the model reads (model
       config `lara_local_tables`): a label changes its own session's rows
       only. A model whose rows carry a label-derived value of *another*
       session's retrieval lists that label table in `lara_lineage_tables`
       instead (fct_action_attributions: is_misrouted of the credited
       retrieval).

    A late export therefore recomputes its own session, the session of the
    retrieval it credits, and every session that placed into the same
    document. The watermark is the newest `_lara_loaded_at` a model has
    already reflected: the max of its own `_lara_loaded_at` column, which
    every recomputed row gets as the run's start time (base rows loaded by
    that run carry the same time, so they count as reflected). A model that
    failed or was not selected keeps its old watermark and catches up on its
    next run.
#}

{% macro lara_incremental_materialization() -%}
    {#- 'incremental' where the project's incremental strategies run (DuckDB:
        delete+insert and lara_replace_sessions need DELETE); 'table' on
        engines whose plain tables have no DELETE (Spark without Delta), which
        rebuild these models on every run. -#}
    {{ return('table' if target.type == 'spark' else 'incremental') }}
{%- endmacro %}


{% macro lara_run_started_at() -%}
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp)
{%- endmacro %}


{% macro lara_session_tables() %}
    {#- Base tables whose rows belong to a session, and how each reaches it. -#}
    {{ return({
        'prompts': 'session',
        'actions': 'session',
        'retrievals': 'prompt',
        'prompt_labels': 'prompt',
        'goal_labels': 'prompt',
        'relevance_labels': 'retrieval',
    }) }}
{% endmacro %}


{% macro lara_lineage_tables() %}
    {#- Tables whose new rows can change rows of *other* sessions (through
        lineage); the label tables change only their own session's rows. -#}
    {{ return(['prompts', 'actions', 'retrievals']) }}
{% endmacro %}


{% macro lara_watermark(relation) -%}
    {#- The newest base load a model has reflected; none = recompute all. -#}
    (select coalesce(max(_lara_loaded_at), cast('1900-01-01' as timestamp)) from {{ relation }})
{%- endmacro %}


{% macro lara_base_relation(table_name) %}
    {#- The relation of base model base_lara__<table_name>, looked up in the
        graph rather than with ref(): it is read only on incremental runs
        (so unit tests need no fixture for it), and every model that reads it
        already depends on it through the staging views. -#}
    {%- set node = graph.nodes['model.lara.base_lara__' ~ table_name] -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema,
        identifier=node.alias or node.name)) }}
{% endmacro %}


{% macro lara_affected_sessions(relation, local_tables=[], lineage_tables=none) %}
    {#- select session_guid: the sessions a run of `relation` must recompute:
        the lineage closure of sessions touched in `lineage_tables` (default
        lara_lineage_tables()), plus the sessions touched in `local_tables`
        (label tables the model reads: they change their own session only). -#}
    {%- set watermark = lara_watermark(relation) -%}
    {%- set lineage = lineage_tables if lineage_tables is not none else lara_lineage_tables() -%}
    {%- set reach_of = lara_session_tables() %}
    with

    prompt_sessions as (
        select distinct prompt_id, session_guid
        from {{ lara_base_relation('prompts') }}
        where prompt_id is not null and session_guid is not null
    ),

    retrieval_sessions as (
        select distinct retrievals.retrieval_id, prompt_sessions.session_guid
        from {{ lara_base_relation('retrievals') }} as retrievals
        inner join prompt_sessions on retrievals.prompt_id = prompt_sessions.prompt_id
        where retrievals.retrieval_id is not null
    ),

    actions as (
        select distinct session_guid, prompt_id, document_id, source_retrieval_id
        from {{ lara_base_relation('actions') }}
        where session_guid is not null
    ),

    {%- for part, part_tables in [('touched_sessions', lineage), ('local_sessions', local_tables)] %}
    {{ part }} as (
        {%- for table_name in part_tables %}
        {%- set reach = reach_of[table_name] %}
        {%- if reach == 'session' %}
        select session_guid from {{ lara_base_relation(table_name) }}
        where _lara_loaded_at > {{ watermark }}
        {%- elif reach == 'prompt' %}
        select prompt_sessions.session_guid
        from {{ lara_base_relation(table_name) }} as loaded
        inner join prompt_sessions on loaded.prompt_id = prompt_sessions.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- else %}
        select retrieval_sessions.session_guid
        from {{ lara_base_relation(table_name) }} as loaded
        inner join retrieval_sessions on loaded.retrieval_id = retrieval_sessions.retrieval_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- endif %}
        {{ 'union' if not loop.last }}
        {%- else %}
        select cast(null as {{ dbt.type_string() }}) as session_guid where false
        {%- endfor %}
    ),
    {%- endfor %}

    touched_retrievals as (
        select retrieval_id from retrieval_sessions
        where session_guid in (select session_guid from touched_sessions)
    ),

    linked_actions as (
        select * from actions
        where
            session_guid in (select session_guid from touched_sessions)
            or source_retrieval_id in (select retrieval_id from touched_retrievals)
            or prompt_id in (
                select prompt_id from prompt_sessions
                where session_guid in (select session_guid from touched_sessions)
            )
    ),

    document_actions as (
        select * from actions
        where document_id in (
            select document_id from linked_actions where document_id is not null
        )
    ),

    lineage_actions as (
        select * from linked_actions
        union
        select * from document_actions
    )

    select session_guid from touched_sessions where session_guid is not null
    union
    select session_guid from local_sessions where session_guid is not null
    union
    select session_guid from lineage_actions
    union
    select retrieval_sessions.session_guid
    from lineage_actions
    inner join retrieval_sessions
        on lineage_actions.source_retrieval_id = retrieval_sessions.retrieval_id
{% endmacro %}


{% macro lara_affected_sessions_cte() %}
    {#- The first CTE of a session-grained incremental model:
        `lara_affected_sessions`, empty work on a full build. The label
        tables the model reads are its config `lara_local_tables`. -#}
lara_affected_sessions as {{ lara_materialized_cte() }} (
    {% if is_incremental() -%}
    {{ lara_affected_sessions(this, config.get('lara_local_tables', []), config.get('lara_lineage_tables')) }}
    {%- else -%}
    select cast(null as {{ dbt.type_string() }}) as session_guid where false
    {%- endif %}
),
{% endmacro %}


{% macro lara_materialized_cte() -%}
    {{ return(adapter.dispatch('lara_materialized_cte', 'lara')()) }}
{%- endmacro %}

{#- Compute a CTE once even where the planner would inline it. -#}
{% macro duckdb__lara_materialized_cte() -%}
    materialized
{%- endmacro %}

{% macro default__lara_materialized_cte() -%}
{%- endmacro %}


{% macro lara_in_affected_sessions(column) -%}
    {#- A where-clause term: true on a full build, else only affected sessions. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select session_guid from lara_affected_sessions)
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{#
    Custom incremental strategy `lara_replace_sessions`: delete every row of
    the affected sessions (also sessions that now produce no rows at all,
    e.g. when their only prompt turned out to be a conflicting duplicate),
    then insert the recomputed rows. The session column is the model config
    `lara_session_column` (default session_guid).
#}
{% macro get_incremental_lara_replace_sessions_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set column = config.get('lara_session_column', 'session_guid') -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where {{ column }} in (
        {{ lara_affected_sessions(target, config.get('lara_local_tables', []), config.get('lara_lineage_tables')) }}
    );
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}
