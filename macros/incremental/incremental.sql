{#
    Incremental runs read their state from models of the run_state folder
    (models/run_state), not from hidden side tables:

    - lara_incremental_manifest: the load log, one row per raw file each
      completed run loaded. It is the last node of the DAG (it depends on
      every incremental model), so it only records a run whose models all
      succeeded. Base models compare the raw listing with it to find their
      pending partitions; its newest `run_started_at` is the watermark of the
      last completed run.
    - lara_tables_this_run: per contract table, its newest base load and
      whether a row was loaded after the last completed run's watermark.
      Models recomputed whole (strategy lara_replace_table: the replay marts,
      and the log marts over every labelled retrieval or attribution) are
      recomputed only when one of their tables was.
    - lara_run_limits: this run's limits (watermark of the last completed
      run, newest base load, whether this is a full build).
    - lara_sessions_this_run: the sessions every session-grained model
      recomputes on an incremental run: sessions touched by rows loaded
      after the watermark, closed over lineage (macros below), plus the
      sessions of newly loaded labels and stage spans. On a full build:
      every session. Each session-grained model ref()s it, filters its
      inputs with lara_in_sessions_this_run() and stamps its rows with
      lara_stamp_rows().
    - lara_days_this_run: the event days of those sessions; the daily
      aggregates recompute exactly these days.

    Base models read the manifest as the previous run left it (it is
    downstream of them, so by relation rather than ref(), the way a model
    reads its own earlier rows through `this`); everything else ref()s the
    run-state models.
#}

{% macro lara_overwrites_partitions() -%}
    {#- True where plain tables have no DELETE (Spark without Delta): the
        incremental models there replace whole partitions instead of rows
        (spark_strategies.sql). -#}
    {{ return(target.type == 'spark') }}
{%- endmacro %}


{% macro lara_spark_partition_by(column) -%}
    {#- The model config partition_by: `column` where incremental runs replace
        partitions (Spark), none elsewhere. -#}
    {{ return([column] if lara_overwrites_partitions() else none) }}
{%- endmacro %}


{% macro lara_session_grained_config(session_column='session_guid', partition_column='_lara_session_date', key=none) -%}
    {#- The config() of a session-grained model: incremental, strategy
        lara_replace_sessions (a run deletes and rewrites the rows of
        lara_sessions_this_run, matched on `session_column`), partitioned by
        `partition_column` (default _lara_session_date) where runs replace
        partitions (Spark), failing on a schema change. With `key` (a unique
        column, config lara_recompute_key), the model also recomputes rows
        of other sessions (fct_retrieval_reretrievals: the retrievals of
        lara_users_this_run's users on their days), and the strategy replaces those rows too,
        matched on `key`. Called first thing in the model, in place of a
        config block. -#}
    {%- set settings = {
        'materialized': 'incremental',
        'incremental_strategy': 'lara_replace_sessions',
        'partition_by': lara_spark_partition_by(partition_column),
        'on_schema_change': 'fail'
    } -%}
    {%- if session_column != 'session_guid' -%}
        {%- do settings.update({'lara_session_column': session_column}) -%}
    {%- endif -%}
    {%- if key is not none -%}
        {%- do settings.update({'lara_recompute_key': key}) -%}
    {%- endif -%}
    {{ config(**settings) }}
{%- endmacro %}


{% macro lara_daily_config(day_column, lookback_days=0) -%}
    {#- The config() of a daily aggregate: incremental, strategy
        lara_replace_days (a run deletes and rewrites the days of
        lara_days_this_run in `day_column`, and with `lookback_days` N the N
        days before each), partitioned by that day where runs replace
        partitions (Spark), failing on a schema change. Called first thing
        in the model, in place of a config block. -#}
    {%- set settings = {
        'materialized': 'incremental',
        'incremental_strategy': 'lara_replace_days',
        'lara_day_column': day_column,
        'partition_by': lara_spark_partition_by(day_column),
        'on_schema_change': 'fail'
    } -%}
    {%- if lookback_days != 0 -%}
        {%- do settings.update({'lara_day_lookback': lookback_days}) -%}
    {%- endif -%}
    {{ config(**settings) }}
{%- endmacro %}


{% macro lara_whole_table_config(tables=none) -%}
    {#- The config() of a model recomputed whole, and only on a run that
        loaded a row of one of the contract `tables` it reads
        (lara_tables_this_run): incremental, strategy lara_replace_table (the
        rows are replaced all at once, or left as they are), failing on a
        schema change. For the replay marts (a scheduled run seldom loads a
        replay experiment, and their percentiles are over the whole
        experiment), and for the log marts over every labelled retrieval or
        attribution, which leave `tables` out: every contract table (a run
        with nothing new keeps them). Called first thing in the model, with
        the same `tables` as its lara_tables_this_run_cte. -#}
    {{ config(
        materialized='incremental',
        incremental_strategy='lara_replace_table',
        lara_tables=lara_contract_table_names() if tables is none else tables,
        on_schema_change='fail'
    ) }}
{%- endmacro %}


{% macro lara_tables_loaded_select(tables=none) -%}
    {#- select is_loaded: one row, true when a row of one of the contract
        `tables` (none: every contract table) was loaded this run
        (lara_tables_this_run; every table on a full build). -#}
    select count(*) > 0 as is_loaded
    from {{ ref('lara_tables_this_run') }}
    where
        is_loaded_this_run
        and table_name in {{ lara_quoted_list(lara_contract_table_names() if tables is none else tables) }}
{%- endmacro %}


{% macro lara_tables_this_run_cte(tables=none) -%}
    {#- The import CTE `tables_this_run` (is_loaded) of a model recomputed
        whole (lara_whole_table_config); its ref() is unconditional, so the
        DAG shows the edge. -#}
tables_this_run as (

    {{ lara_tables_loaded_select(tables) }}

),
{%- endmacro %}


{% macro lara_if_tables_loaded() -%}
    {#- A where-clause term over the `tables_this_run` CTE for the model's
        inputs: on an incremental run true only when its tables were loaded
        (otherwise the model reads no row and the strategy keeps the table);
        true on a full build. -#}
    {%- if is_incremental() -%}
    (select is_loaded from tables_this_run)
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_selects_every_incremental_model() %}
    {#- True when this run selected every incremental model of the project
        (the load log advances the watermark only then; a partial
        `--select` keeps it, so the models it skipped catch up later). A
        `set` inside a loop does not leave it, hence the namespace. -#}
    {%- set selection = namespace(complete=true) -%}
    {%- if execute -%}
        {%- for node in graph.nodes.values()
            if node.resource_type == 'model' and node.package_name == project_name
            and node.config.materialized == 'incremental' and node.name != 'lara_incremental_manifest' -%}
            {%- if node.unique_id not in selected_resources -%}{%- set selection.complete = false -%}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(selection.complete) }}
{% endmacro %}


{% macro lara_run_started_at() -%}
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp)
{%- endmacro %}


{% macro lara_run_state_relation(identifier) %}
    {#- The relation of a run_state model as the previous run left it, or none
        when it does not exist yet (first build). -#}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {{ return(adapter.get_relation(
        database=target.database,
        schema=generate_schema_name('run_state', none),
        identifier=identifier)) }}
{% endmacro %}


{% macro lara_session_tables() %}
    {#- Base tables whose rows belong to a session, how each reaches it, and
        whether a newly loaded row changes other sessions' rows through lineage
        (prompts, actions, retrievals; prompt labels decide a retrieval's
        misroute flag, which attributions in other sessions carry) or only its
        own session's rows (the other labels, the Tier 0 sample design, stage spans). -#}
    {{ return({
        'prompts': {'reach': 'session', 'lineage': true},
        'actions': {'reach': 'session', 'lineage': true},
        'retrievals': {'reach': 'retrieval', 'lineage': true},
        'prompt_labels': {'reach': 'prompt', 'lineage': true},
        'goal_labels': {'reach': 'prompt', 'lineage': false},
        'relevance_labels': {'reach': 'label', 'lineage': false},
        'stage_spans': {'reach': 'prompt', 'lineage': false},
        'prompt_label_sample_design': {'reach': 'prompt', 'lineage': false},
    }) }}
{% endmacro %}


{% macro lara_touched_sessions_select(watermark) %}
    {#- select session_guid, table_name, is_lineage: the sessions of base rows
        (any status: a version quarantined today removes yesterday's row)
        loaded after `watermark`, and the table that touched them. A
        retrieval touches its own session and its prompt's. -#}
    {%- set parts = [] -%}
    {%- for table_name, spec in lara_session_tables().items() -%}
    {%- set loaded = ref('base_lara__' ~ table_name) -%}
    {%- set part -%}
        {%- if spec.reach == 'session' %}
        select session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }}
        where _lara_loaded_at > {{ watermark }}
        {%- elif spec.reach == 'retrieval' %}
        select session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }}
        where _lara_loaded_at > {{ watermark }}
        union all
        select prompts.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__prompts') }} as prompts on loaded.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- elif spec.reach == 'prompt' %}
        select prompts.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__prompts') }} as prompts on loaded.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- else %}
        select retrievals.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__retrievals') }} as retrievals
            on loaded.retrieval_id = retrievals.retrieval_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- endif %}
    {%- endset -%}
    {%- do parts.append(part) -%}
    {%- endfor %}
    {{ parts | join('\n        union all\n') }}
{% endmacro %}


{% macro lara_lineage_closure_select(touched) %}
    {#- select session_guid, reason: the sessions a run recomputes, from the
        relation `touched` (session_guid, table_name, is_lineage):
        1. the touched sessions themselves (reason `loaded`, or `label` when
           only a local table touched them);
        2. lineage, forwards and backwards: the actions of touched sessions,
           actions naming a retrieval or a prompt of a touched session, and
           every action in the documents those actions touched (placement
           chains and document credits live in a document);
        3. the sessions of those actions and of the retrievals they name,
           and of the retrievals naming a prompt of a touched session (a
           retrieval's user, surface and scope are its prompt's, which may
           be logged in another session); and the prompt sessions of the
           retrievals of touched sessions and of the retrievals those
           actions name (a prompt's row sums its retrievals' use evidence
           and outcomes, which a new action in the retrieval's session or
           naming it changes); and the sessions of the retrievals of the
           prompts that actions of touched sessions name, with those
           prompts' sessions (a reject or an agent action counts for the
           retrievals of its prompt) (reason `lineage`).
        A session gets the first reason that applies in the order `loaded`,
        `lineage`, `label`: `label` means that only label tables reached it,
        so models without those tables in their lineage may skip it
        (lara_recomputed_here); a session reached through lineage that also
        has a new label is recomputed by every model.
        Rows of every status count (a quarantined version still tells which
        session it came from). Each step is a semi-join of a base table on a
        small set, so the cost follows the touched rows. -#}
    with

    touched_lineage as (
        select distinct session_guid from {{ touched }}
        where is_lineage and session_guid is not null
    ),

    prompt_retrievals as (
        select retrievals.retrieval_id, retrievals.session_guid
        from {{ ref('base_lara__retrievals') }} as retrievals
        inner join {{ ref('base_lara__prompts') }} as prompts
            on retrievals.prompt_id = prompts.prompt_id
        where prompts.session_guid in (select session_guid from touched_lineage)
    ),

    touched_retrievals as (
        select retrieval_id from {{ ref('base_lara__retrievals') }}
        where session_guid in (select session_guid from touched_lineage)
        union
        select retrieval_id from prompt_retrievals
    ),

    touched_prompts as (
        select prompt_id from {{ ref('base_lara__prompts') }}
        where session_guid in (select session_guid from touched_lineage)
    ),

    linked_actions as (
        select session_guid, document_id, source_retrieval_id, prompt_id
        from {{ ref('base_lara__actions') }}
        where
            session_guid in (select session_guid from touched_lineage)
            or source_retrieval_id in (select retrieval_id from touched_retrievals)
            or prompt_id in (select prompt_id from touched_prompts)
    ),

    document_actions as (
        select session_guid, document_id, source_retrieval_id
        from {{ ref('base_lara__actions') }}
        where document_id in (
            select document_id from linked_actions where document_id is not null
        )
    ),

    lineage_actions as (
        select session_guid, document_id, source_retrieval_id from linked_actions
        union
        select * from document_actions
    ),

    {# Prompts the actions of touched sessions name, logged in any session:
       a reject or an agent action counts for the prompt's retrievals
       (int_retrieval_reject_failures, int_retrieval_substitution_failures),
       which may be in another session than the action. Those actions are
       among linked_actions (its first condition): read from there, not from
       the actions' history again (DuckDB hashed every action with a prompt
       to match them, 1.0 s at 120 days of 100k events). #}
    action_prompts as (
        select prompt_id from linked_actions
        where
            session_guid in (select session_guid from touched_lineage)
            and prompt_id is not null
    ),

    {# Retrievals whose use or outcomes a new row may change: those of
       touched sessions, those the lineage actions name and those of the
       prompts the touched sessions' actions name. #}
    used_retrievals as (
        select session_guid, prompt_id
        from {{ ref('base_lara__retrievals') }}
        where
            session_guid in (select session_guid from touched_lineage)
            or retrieval_id in (
                select source_retrieval_id from lineage_actions where source_retrieval_id is not null
            )
            or prompt_id in (select prompt_id from action_prompts)
    ),

    named_retrieval_sessions as (
        select session_guid from used_retrievals
        union
        select prompts.session_guid
        from used_retrievals
        inner join {{ ref('base_lara__prompts') }} as prompts
            on used_retrievals.prompt_id = prompts.prompt_id
    ),

    reasons as (
        select session_guid, case when is_lineage then 1 else 3 end as reason_order
        from {{ touched }}
        union all
        select session_guid, 2 as reason_order from lineage_actions
        union all
        select session_guid, 2 as reason_order from named_retrieval_sessions
        union all
        select session_guid, 2 as reason_order from prompt_retrievals
    )

    select
        session_guid,
        case min(reason_order) when 1 then 'loaded' when 2 then 'lineage' else 'label' end as reason
    from reasons
    where session_guid is not null
    group by session_guid
{% endmacro %}


{% macro lara_label_tables() %}
    {#- The session tables whose newly loaded rows change only their own
        session's rows (lara_session_tables without lineage): goal and
        relevance labels, stage spans, the Tier 0 sample design.
        lara_sessions_this_run and lara_days_this_run say, per session and
        per day, which of them touched it (`has_loaded_<table>`). -#}
    {%- set tables = [] -%}
    {%- for table_name, spec in lara_session_tables().items() if not spec.lineage -%}
        {%- do tables.append(table_name) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}


{% macro lara_label_tables_read(unique_id=none) %}
    {#- The label tables (lara_label_tables) in the lineage of a node (default:
        the model being built), from the DAG at execute time: a walk up
        `depends_on` that does not pass through the run_state models (they
        read every base table to find the sessions, not to compute rows).
        A session or day touched only by other label tables leaves the
        node's rows as they are, so the node does not recompute it. At parse
        time, or for a node not in the graph (a unit test), every label
        table: the conservative answer. -#}
    {%- set start = unique_id or (model.unique_id if model is defined and model is mapping else none) -%}
    {%- if not execute or start is none or start not in graph.nodes -%}
        {{ return(lara_label_tables()) }}
    {%- endif -%}
    {%- set seen = [start] -%}
    {#- The list grows while the loop runs over it: a breadth-first walk. -#}
    {%- for node_id in seen -%}
        {%- set node = graph.nodes.get(node_id) -%}
        {%- if node is not none and (node_id == start or node.fqn[1] != 'run_state') -%}
            {%- for parent in node.depends_on.nodes if parent not in seen -%}
                {%- do seen.append(parent) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set read = [] -%}
    {%- for table_name in lara_label_tables() -%}
        {%- if 'model.' ~ project_name ~ '.base_lara__' ~ table_name in seen -%}
            {%- do read.append(table_name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(read) }}
{% endmacro %}


{% macro lara_recomputed_here() -%}
    {#- A where-clause term over lara_sessions_this_run or lara_days_this_run:
        the sessions (days) the model being built recomputes: those every
        model recomputes (`is_for_every_model`) and those touched by a label
        table in the model's lineage (lara_label_tables_read). True on a full
        build (every session and day; and unit tests, whose stand-in run
        state may lack the columns). The relation it filters needs an alias:
        Spark reads `from t where (c)` as table `t` aliased `where` with
        column list `(c)`. -#}
    {%- if is_incremental() -%}
    {%- set terms = ['is_for_every_model'] -%}
    {%- for table_name in lara_label_tables_read() -%}
        {%- do terms.append('has_loaded_' ~ table_name) -%}
    {%- endfor -%}
    ({{ terms | join(' or ') }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_sessions_this_run_select() -%}
    {#- select session_guid, session_date: the sessions of lara_sessions_this_run
        the model being built recomputes (lara_recomputed_here). The model's
        import CTE and its strategy (DuckDB and Spark) both use it, so a run
        replaces exactly the sessions it recomputed. -#}
    select
        run_sessions.session_guid,
        run_sessions.session_date
    from {{ ref('lara_sessions_this_run') }} as run_sessions
    where {{ lara_recomputed_here() }}
{%- endmacro %}


{% macro lara_sessions_this_run_cte() -%}
    {#- The import CTE every session-grained model opens with:
        `sessions_this_run` (session_guid, session_date): on an incremental
        run the sessions it recomputes (lara_sessions_this_run_select). The
        ref() is unconditional, so dbt draws the edge on every build. -#}
sessions_this_run as (

    {{ lara_sessions_this_run_select() }}

),
{%- endmacro %}


{% macro lara_in_sessions_this_run(column) -%}
    {#- A where-clause term over the `sessions_this_run` CTE: true on a full
        build, else only the sessions this run recomputes. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select session_guid from sessions_this_run)
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_events_this_run(column, event_time) -%}
    {#- lara_in_sessions_this_run for a read of the clean prompts or actions
        (stg_lara__prompts, stg_lara__actions) by their session `column`, with
        `event_time` their timestamp: also on or after the earliest date of
        the sessions this run recomputes. The same rows as the session filter
        alone: a session's date is the UTC date of its first clean prompt or
        action (lara_session_dates, recomputed from the same views whenever
        the session's prompts or actions change), so none of them is earlier; a session without a date has no clean
        prompt or action to read (and a clean row always has its time). The
        bound lets DuckDB skip the older row groups of the base table (zone
        maps) instead of probing every event of the history: at 120 days of
        100k events the actions' read took 0.16 s instead of 0.34
        (docs/benchmarks.md, "What grows with the history"). -#}
    {%- if is_incremental() -%}
    ({{ lara_in_sessions_this_run(column) }}
        and {{ event_time }} >= (select min(sessions_this_run.session_date) from sessions_this_run))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_rows_since_first(relation, time_column, column='session_guid') -%}
    {#- lara_in_sessions_this_run for a read of `relation` by its session
        `column`, also keeping `time_column` on or after the earliest
        `time_column` of those sessions' rows in `relation`: the same rows
        when `time_column` is never null (a contract table's time, required on
        every clean row). The minimum reads two narrow columns of the
        relation; the read itself then skips the older row groups (DuckDB's
        zone maps) instead of reading every wide row of the history and
        dropping it at the session filter. For the clean retrievals, whose
        time is not part of their session's date: at 120 days of 100k events
        `int_retrievals_scoped`'s query took 0.39 and 0.53 s instead of 1.7
        and 2.2, with a CI run on the host (docs/benchmarks.md, "What grows
        with the history"). -#}
    {%- if is_incremental() -%}
    ({{ lara_in_sessions_this_run(column) }}
        and {{ time_column }} >= (
            select min(run_rows.{{ time_column }})
            from {{ relation }} as run_rows
            where {{ lara_in_sessions_this_run('run_rows.' ~ column) }}
        ))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_within_times_of(relation, time_column='retrieved_at', relation_time_column=none) -%}
    {#- A where-clause term for a read by id (`id in (select id from
        relation)`) of rows that carry the time of the rows of `relation` they
        match (a retrieval's assets, its scoped row): `time_column` between the
        earliest and the latest `relation_time_column` (default the same
        name) of `relation`. The same rows; DuckDB's zone maps then skip the
        row groups outside those times, which a semi-join on an id cannot. True
        on a full build. -#}
    {%- if is_incremental() -%}
    {%- set relation_time_column = relation_time_column or time_column -%}
    ({{ time_column }} >= (select min({{ relation }}.{{ relation_time_column }}) from {{ relation }})
        and {{ time_column }} <= (select max({{ relation }}.{{ relation_time_column }}) from {{ relation }}))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_session_rows_this_run(column='session_guid') -%}
    {#- lara_in_sessions_this_run for a read of a session-grained model's
        rows (stamped by lara_stamp_rows on the same session column):
        `column` is that column, optionally qualified (`alias.session_guid`),
        and the rows' `_lara_session_date` (same qualifier) must be a date of
        the sessions this run, or null (a session with no clean prompt or
        action). The same rows as the session filter alone: a session's date
        changes only when its prompts or actions do, and then every model
        recomputes (and restamps) it. The date filter lets the engine skip
        the other days' data: DuckDB pushes the join's date range into the
        scan (zone maps), Spark prunes `_lara_session_date` partitions. -#}
    {%- if is_incremental() -%}
    {%- set qualifier = column.rsplit('.', 1)[0] ~ '.' if '.' in column else '' -%}
    {%- set session_date = qualifier ~ '_lara_session_date' -%}
    ({{ lara_in_sessions_this_run(column) }}
        and ({{ session_date }} in (select session_date from sessions_this_run) or {{ session_date }} is null))
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_in_prompts_of(relation, column='prompt_id') -%}
    {#- A where-clause term keeping the rows whose `column` (default
        prompt_id) is a prompt of the rows of `relation` (a CTE with a
        prompt_id column): true on a full build, else the rows of those
        prompts in any session. A retrieval's prompt may be logged in another
        session (exports from the editor), which the run need not recompute,
        so a model reads its retrievals' prompt-side rows, and its prompts'
        retrievals, by prompt_id rather than by the sessions this run. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select {{ relation }}.prompt_id from {{ relation }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro lara_stamp_rows(cte, session_column='session_guid') %}
    {#- The final select of a session-grained incremental model: the rows of
        `cte` with their bookkeeping columns, `_lara_loaded_at` (this run) and
        `_lara_session_date` (the date of the row's session, `session_column`,
        the model's lara_session_column; the partition column on Spark). -#}
select
    {{ cte }}.*,
    {{ lara_run_started_at() }} as _lara_loaded_at,
    sessions_this_run.session_date as _lara_session_date
from {{ cte }}
left join sessions_this_run
    on {{ cte }}.{{ session_column }} = sessions_this_run.session_guid
{% endmacro %}


{#
    Custom incremental strategy `lara_replace_sessions`: delete every row of
    the sessions this run recomputes (also sessions that now produce no rows
    at all, e.g. when their only prompt turned out to be a conflicting
    duplicate), then insert the recomputed rows. The session column is the
    model config `lara_session_column` (default session_guid). With config
    `lara_recompute_key`, the rows of other sessions whose key the model
    recomputed are deleted too.
#}
{% macro get_incremental_lara_replace_sessions_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set column = config.get('lara_session_column', 'session_guid') -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set key = config.get('lara_recompute_key') %}
    {%- if lara_is_bulk_run() %}
    {#- a bulk run recomputed every row (macros/incremental/bulk.sql) #}
    delete from {{ target }};
    {%- else %}
    {%- set bound = lara_session_date_bound(arg_dict['dest_columns'] | map(attribute='name') | list) %}
    delete from {{ target }}
    where
        ({{ column }} in (select session_guid from ({{ lara_sessions_this_run_select() }}) as recomputed)
        {%- if bound %}
            and (_lara_session_date >= {{ bound }} or _lara_session_date is null)
        {%- endif %})
        {%- if key %}
        or {{ key }} in (select {{ key }} from {{ arg_dict['temp_relation'] }})
        {%- endif %};
    {%- endif %}
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{% macro lara_session_date_bound(columns) %}
    {#- The least `_lara_session_date` a row of the sessions this run
        recomputes can carry, as a date literal for the delete of strategy
        lara_replace_sessions, or none (no bound): the earliest date
        lara_session_dates has held for any of those sessions
        (lara_sessions_this_run.earliest_session_date). Every stamp was once
        its session's date there, and that earliest date never moves later,
        so the bounded delete removes the same rows; DuckDB then skips the
        row groups of older days (zone maps) instead of probing the session
        column of every row of the history. None when the model has no
        `_lara_session_date` column (`columns`: its column names), when no
        session this run has a date, and at parse time. Rows without a date
        are always in reach (`or _lara_session_date is null`).

        Also none when lara_session_dates was rebuilt after the last completed
        run (no row of it written by then: a `--full-refresh` of that model
        alone, or its first build on an existing warehouse). A rebuild starts
        every earliest date afresh, so after a run that failed between the
        two (dates recorded, a model not yet replaced) a model may hold rows
        stamped earlier than the earliest date now held. Those sessions are
        in every run until one completes (the watermark stays), so the runs
        until then delete without the bound, and find those rows. -#}
    {%- if not execute or '_lara_session_date' not in (columns | map('lower') | list) -%}
        {{ return(none) }}
    {%- endif -%}
    {#- Not ref(): the models using the strategy do not depend on these two
        (lara_sessions_this_run, which they do, is built after both). -#}
    {%- set session_dates = lara_run_state_relation('lara_session_dates') -%}
    {%- set run_limits = lara_run_state_relation('lara_run_limits') -%}
    {%- if session_dates is none or run_limits is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set query -%}
        select cast(min(run_sessions.earliest_session_date) as {{ dbt.type_string() }})
        from {{ ref('lara_sessions_this_run') }} as run_sessions
        where
            {{ lara_recomputed_here() }}
            and exists (
                select 1
                from {{ session_dates }} as session_dates
                where session_dates._lara_loaded_at <= (
                    select run_limits.lower_limit from {{ run_limits }} as run_limits
                )
            )
    {%- endset -%}
    {%- set earliest = run_query(query).columns[0].values()[0] -%}
    {{ return(("cast(" ~ lara_sql_string(earliest) ~ " as date)") if earliest else none) }}
{% endmacro %}


{#
    Custom incremental strategy `lara_replace_table` (models configured by
    lara_whole_table_config): on a run that loaded one of the model's tables
    (config lara_tables), delete every row and insert the recomputed table;
    on any other run the model read no row and the table stays as it is.
#}
{% macro get_incremental_lara_replace_table_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where ({{ lara_tables_loaded_select(config.require('lara_tables')) }});
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
    where ({{ lara_tables_loaded_select(config.require('lara_tables')) }})
{% endmacro %}


{#
    Daily aggregates. Their rows are per day (and other dimensions) plus
    period totals (day null). An incremental run recomputes the day rows of
    lara_days_this_run only; period totals are recomputed from all days
    (they are not sums of day rows for every measure: percentiles, distinct
    prompts). Strategy `lara_replace_days` deletes the rows of those days and
    the period totals, then inserts the recomputed rows; the day column is
    the model config `lara_day_column`.
#}
{% macro lara_days_this_run_cte(lookback_days=0) -%}
    {#- The import CTE `days_this_run` (event_date) of a daily aggregate; its
        ref() is unconditional, so the DAG shows the edge. With
        `lookback_days` N: also the N days before each of them (a model
        whose day depends on the following N days' events). -#}
days_this_run as (

    {{ lara_days_this_run_select(lookback_days) }}

),
{%- endmacro %}


{% macro lara_days_this_run_select(lookback_days=0) -%}
    {#- select event_date: the days of lara_days_this_run the model being
        built recomputes (lara_recomputed_here) and, with `lookback_days` N,
        the N days before each. The strategy lara_replace_days replaces the
        same set (config lara_day_lookback). -#}
    {%- set days -%}
        (select run_days.event_date from {{ ref('lara_days_this_run') }} as run_days where {{ lara_recomputed_here() }})
    {%- endset -%}
    {%- if (lookback_days | int) <= 0 -%}
    select event_date from {{ days }} as days_this_run
    {%- else -%}
    {{ lara_shifted_days(days, range(0, -(lookback_days | int) - 1, -1)) }}
    {%- endif -%}
{%- endmacro %}


{% macro lara_recomputes_a_day() -%}
    {#- Whether the model being built recomputes a day this run (a row of
        lara_days_this_run_select), asked of the warehouse when the model is
        compiled, just before it runs (lara_days_this_run is upstream, so it
        is already this run's). True on a full build, at parse time, and
        when the run-state relation cannot be read. A daily aggregate that
        recomputes no day leaves every row as it is: lara_rollup reads its
        period measures back instead of recomputing them from every row. -#}
    {%- if not (execute and is_incremental()) -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set days = run_query('select count(*) as n from (' ~ lara_days_this_run_select() ~ ') as days') -%}
    {{ return(days is none or (days.columns[0].values()[0] | int) > 0) }}
{%- endmacro %}


{% macro lara_shifted_days(days, offsets, columns=[]) -%}
    {#- select distinct [columns..., ]event_date: every event_date of `days`
        (a relation, CTE or parenthesised subquery with that column) moved
        by each of `offsets` days (0 keeps the day, -1 the day before, 1 the
        day after), with `columns` of `days` carried (distinct per their
        values). One read of `days`, crossed with the offsets as constant
        rows: a union of one read per offset made Spark plan and run `days`
        (often itself a CTE) once per offset, at every place it is read. -#}
    {%- if offsets | length == 0 -%}
        {{ exceptions.raise_compiler_error('lara_shifted_days: no offsets') }}
    {%- endif %}
    select distinct
        {%- for column in columns %}
        shifted_from.{{ column }},
        {%- endfor %}
        {{ lara_add_days('shifted_from.event_date', 'shift_by.offset_days') }} as event_date
    from {{ days }} as shifted_from
    cross join (
        {%- for offset in offsets %}
        select {{ offset | int }} as offset_days
        {%- if not loop.last %}
        union all
        {%- endif %}
        {%- endfor %}
    ) as shift_by
{%- endmacro %}


{% macro lara_in_days_this_run(column) -%}
    {#- A where-clause term over the `days_this_run` CTE: true on a full build,
        else only the days this run recomputes. -#}
    {%- if is_incremental() -%}
    {{ column }} in (select event_date from days_this_run)
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}


{% macro get_incremental_lara_replace_days_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set column = config.require('lara_day_column') -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where
        {{ column }} is null
        or {{ column }} in ({{ lara_days_this_run_select(config.get('lara_day_lookback', 0)) }});
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{% macro lara_show_label_lineage() %}
    {#- run-operation: per incremental model of the project, the label tables
        in its lineage (lara_label_tables_read), one log line each as JSON:
        which models a session or day touched only by labels reaches. -#}
    {%- for node in (graph.nodes.values() | sort(attribute='name'))
        if node.resource_type == 'model' and node.package_name == project_name
        and node.config.materialized == 'incremental' -%}
        {%- do log('lara_label_lineage ' ~ tojson({'model': node.name,
            'strategy': node.config.incremental_strategy,
            'label_tables': lara_label_tables_read(node.unique_id)}), info=true) -%}
    {%- endfor -%}
{% endmacro %}
