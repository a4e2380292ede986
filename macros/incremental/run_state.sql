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
