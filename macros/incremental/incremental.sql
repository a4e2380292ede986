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

{% macro lara_overwrites_partitions() -%}
    {#- True where plain tables have no DELETE (Spark without Delta): the
        incremental models there replace whole partitions instead of rows
        (macros/spark/incremental.sql). -#}
    {{ return(target.type == 'spark') }}
{%- endmacro %}


{% macro lara_spark_partition_by(column) -%}
    {#- The model config partition_by: `column` where incremental runs replace
        partitions (Spark), none elsewhere. -#}
    {{ return([column] if lara_overwrites_partitions() else none) }}
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


{% macro lara_affected_sessions(relation, local_tables=[], lineage_tables=none, watermark=none, touched=none) %}
    {#- select session_guid: the sessions a run of `relation` must recompute:
        the lineage closure of sessions touched in `lineage_tables` (default
        lara_lineage_tables()), plus the sessions touched in `local_tables`
        (label tables the model reads: they change their own session only).
        `watermark`: a SQL timestamp (default: the model's, as a subquery).
        `touched`: a relation already holding the touched sessions
        (session_guid, is_lineage), as lara_touched_sessions_select() gives. -#}
    {%- set watermark = watermark if watermark is not none else lara_watermark(relation) -%}
    {%- set lineage = lineage_tables if lineage_tables is not none else lara_lineage_tables() -%}
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

    {%- for part, is_lineage, part_local, part_lineage in [
        ('touched_sessions', 'true', [], lineage), ('local_sessions', 'false', local_tables, [])] %}
    {{ part }} as (
        {%- if touched is not none %}
        select session_guid from {{ touched }} where is_lineage = {{ is_lineage }}
        {%- else %}
        select session_guid from (
            {{ lara_touched_sessions_select(part_local, part_lineage, watermark) }}
        ) as touched
        {%- endif %}
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


{% macro lara_touched_sessions_select(local_tables, lineage_tables, watermark) %}
    {#- select session_guid, is_lineage: sessions with a row loaded after
        `watermark` in a lineage table (is_lineage) or a local label table. -#}
    {%- set reach_of = lara_session_tables() -%}
    {%- set parts = [] -%}
    {%- for tables, is_lineage in [(lineage_tables, 'true'), (local_tables, 'false')] -%}
    {%- for table_name in tables -%}
    {%- set reach = reach_of[table_name] -%}
    {%- set part -%}
        {%- if reach == 'session' %}
        select session_guid, {{ is_lineage }} as is_lineage from {{ lara_base_relation(table_name) }}
        where _lara_loaded_at > {{ watermark }}
        {%- elif reach == 'prompt' %}
        select prompts.session_guid, {{ is_lineage }} as is_lineage
        from {{ lara_base_relation(table_name) }} as loaded
        inner join {{ lara_base_relation('prompts') }} as prompts on loaded.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- else %}
        select prompts.session_guid, {{ is_lineage }} as is_lineage
        from {{ lara_base_relation(table_name) }} as loaded
        inner join {{ lara_base_relation('retrievals') }} as retrievals
            on loaded.retrieval_id = retrievals.retrieval_id
        inner join {{ lara_base_relation('prompts') }} as prompts on retrievals.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- endif %}
    {%- endset -%}
    {%- do parts.append(part) -%}
    {%- endfor -%}
    {%- endfor -%}
    {%- if not parts -%}
    {%- do parts.append('select cast(null as ' ~ dbt.type_string() ~ ') as session_guid, true as is_lineage where false') -%}
    {%- endif %}
    {{ parts | join('\n        union\n') }}
{% endmacro %}


{% macro lara_affected_sessions_cte() %}
    {#- The first CTEs of a session-grained incremental model:
        `lara_affected_sessions` (select session_guid), empty work on a full
        build, and `lara_session_dates` (session_guid, session_date) of the
        sessions the run computes. The label tables the model reads are its
        config `lara_local_tables`.

        Where incremental runs replace partitions (Spark), the affected
        sessions are widened to whole session days and staged in a table by
        the model's pre-hook (lara_stage_affected_sessions): Spark inlines a
        CTE at every reference, and this one is referenced many times. -#}
    {%- set staged = is_incremental() and lara_overwrites_partitions() %}
lara_affected_sessions as {{ lara_materialized_cte() }} (
    {% if staged -%}
    select session_guid from {{ lara_staged_sessions_relation(this) }}
    {%- elif is_incremental() -%}
    {{ lara_affected_sessions(this, config.get('lara_local_tables', []), config.get('lara_lineage_tables')) }}
    {%- else -%}
    select cast(null as {{ dbt.type_string() }}) as session_guid where false
    {%- endif %}
),

lara_session_dates as {{ lara_materialized_cte() }} (
    {{ lara_session_dates_select(lara_in_affected_sessions('session_guid')) }}
),
{% endmacro %}


{% macro lara_staged_sessions_relation(relation) %}
    {{ return(relation.incorporate(path={'identifier': relation.identifier ~ '__lara_sessions'})) }}
{% endmacro %}


{% macro lara_stage_affected_sessions() %}
    {#- Pre-hook of the session-grained models. Where incremental runs replace
        partitions (Spark, partitioned by `_lara_session_date`): writes the
        run's affected sessions, widened to every session of each day that
        holds one (by its date before and after the run, so that each
        partition written is complete), to `<model>__lara_sessions`, which
        the model and the strategy read and the strategy drops. Spark inlines
        a CTE at every reference, so the steps are staged as tables: the
        touched sessions (watermark read once), their lineage closure, then
        the widened set. Elsewhere nothing (an empty hook is not run). -#}
    {%- if not (execute and is_incremental() and lara_overwrites_partitions()) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set staged = lara_staged_sessions_relation(this) -%}
    {%- set touched = this.incorporate(path={'identifier': this.identifier ~ '__lara_touched'}) -%}
    {%- set closure = this.incorporate(path={'identifier': this.identifier ~ '__lara_closure'}) -%}
    {%- set session_column = config.get('lara_session_column', 'session_guid') -%}
    {%- set lineage = config.get('lara_lineage_tables') or lara_lineage_tables() -%}
    {%- set local = config.get('lara_local_tables', []) -%}
    {%- set newest = run_query('select cast(max(_lara_loaded_at) as string) from ' ~ this).columns[0].values()[0] -%}
    {%- set watermark = "cast('" ~ (newest or '1900-01-01') ~ "' as timestamp)" -%}
    {%- for relation in [staged, touched, closure] -%}
        {%- do run_query('drop table if exists ' ~ relation) -%}
    {%- endfor -%}
    {%- do run_query('create table ' ~ touched ~ ' using parquet as select distinct * from ('
        ~ lara_touched_sessions_select(local, lineage, watermark) ~ ') as touched where session_guid is not null') -%}
    {%- do run_query('create table ' ~ closure ~ ' using parquet as '
        ~ lara_affected_sessions(this, local, lineage, watermark=watermark, touched=touched)) -%}
    create table {{ staged }} using parquet as
    with

    lara_all_session_dates as (
        {{ lara_session_dates_select() }}
    ),

    lara_affected_days as (
        select {{ lara_null_safe_date('_lara_session_date') }} as session_date from {{ this }}
        where {{ session_column }} in (select session_guid from {{ closure }})
        union
        select {{ lara_null_safe_date('session_date') }} from lara_all_session_dates
        where session_guid in (select session_guid from {{ closure }})
    ),

    lara_widened as (
        select session_guid from {{ closure }}
        union
        select {{ session_column }} from {{ this }}
        where {{ lara_null_safe_date('_lara_session_date') }} in (select session_date from lara_affected_days)
        union
        select session_guid from lara_all_session_dates
        where {{ lara_null_safe_date('session_date') }} in (select session_date from lara_affected_days)
    )

    select distinct session_guid from lara_widened where session_guid is not null
{% endmacro %}


{% macro lara_session_dates_select(where='true') %}
    {#- select session_guid, session_date from int_session_dates (the UTC date
        of each session's first clean prompt or action), optionally filtered. -#}
    select session_guid, session_date from {{ ref('int_session_dates') }}
    where {{ where }}
{% endmacro %}


{% macro lara_null_safe_date(column) -%}
    {#- A session date to match on: rows without one form their own partition. -#}
    coalesce({{ column }}, cast('1900-01-01' as date))
{%- endmacro %}


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


{% macro lara_stamp_rows(cte, session_column='session_guid') %}
    {#- The final select of a session-grained incremental model: the rows of
        `cte` with their bookkeeping columns, `_lara_loaded_at` (this run) and
        `_lara_session_date` (the date of the row's session, `session_column`,
        the model's lara_session_column; the partition column on Spark). -#}
select
    {{ cte }}.*,
    {{ lara_run_started_at() }} as _lara_loaded_at,
    lara_session_dates.session_date as _lara_session_date
from {{ cte }}
left join lara_session_dates
    on {{ cte }}.{{ session_column }} = lara_session_dates.session_guid
{% endmacro %}
