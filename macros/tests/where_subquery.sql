{#
    Data tests sized to the run. dbt wraps the model a generic test reads in
    get_where_subquery (the `where` config); this override adds, on
    incremental runs, a filter to the rows written since the last completed
    run: for a test on an incremental model of this project (or a staging
    view over one), the rows whose `_lara_loaded_at` (config
    lara_loaded_at_column) is after a limit read from the run state
    (lara_test_limit):
    - in `dbt build`, the start of the last completed run (from the load
      log, which is the DAG's last node: every test of the build reads the
      same limit). The build checks the rows it wrote, and those a partial
      `dbt run` (some models only: it keeps the watermark) wrote since, the
      rows it copies included (staging views and dq_quarantine keep their
      base rows' stamps). A model that wrote nothing since checks nothing: a
      run with nothing new does not test the run before's rows again. A
      test that fails skips the load log, so the next build checks those
      rows again.
    - in `dbt test` (after a `dbt run`) and any other command, the limit the
      latest run started from (lara_run_limits.lower_limit): that run's rows.
    The limit is a scalar subquery over a small run-state table (the engine
    still skips older row groups). No run state yet, or no completed run:
    whole tables. Everything is checked instead on a full refresh, with var
    `lara_full_test: true` (`lara run --full-test`, the weekly full test
    run), and for a test whose config sets `lara_test_scope: table` (tests
    whose meaning needs the whole table, e.g. row-count comparisons).
#}
{% macro default__get_where_subquery(relation) -%}
    {%- set conditions = [] -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}{%- do conditions.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- set rows_this_run = lara_test_rows_this_run(relation) -%}
    {%- if rows_this_run -%}{%- do conditions.append(rows_this_run) -%}{%- endif -%}
    {%- if conditions -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {{ conditions | join(' and ') }}) dbt_subquery
        {%- endset -%}
        {%- do return(filtered) -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}


{% macro lara_test_rows_this_run(relation) %}
    {#- The predicate that restricts a data test to the rows this run wrote, or
        '' when the test checks the whole table (see above). -#}
    {%- if not execute or lara_is_full_test() or config.get('lara_test_scope') == 'table' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set attached = model.get('attached_node') -%}
    {%- if not attached or attached not in graph.nodes -%}{{ return('') }}{%- endif -%}
    {%- set node = graph.nodes[attached] -%}
    {#- The column that says which run wrote a row: model config
        lara_loaded_at_column (the staging views, the load log), else
        _lara_loaded_at on incremental models. -#}
    {%- set column = node.config.get('lara_loaded_at_column') -%}
    {%- if not column and node.config.materialized == 'incremental' -%}{%- set column = '_lara_loaded_at' -%}{%- endif -%}
    {%- if not column -%}{{ return('') }}{%- endif -%}
    {%- set limit = lara_test_limit() -%}
    {%- if not limit -%}{{ return('') }}{%- endif -%}
    {{ return(column ~ " > coalesce((" ~ limit ~ "), cast('1900-01-01' as timestamp))") }}
{% endmacro %}


{% macro lara_test_limit() %}
    {#- A query for the stamp after which a data test reads rows, or '' when
        there is no run state yet (see above):
        - `dbt build`: the start of the last completed run, from the load
          log as it was before this build: the newest run whose
          reflected_through advanced the watermark (a partial run records its
          files under the watermark it found). A completed run that loaded no
          file is not in the log: the rows it rewrote are read again, never
          fewer.
        - other commands: the limit the latest run started from
          (lara_run_limits.lower_limit), so that `dbt test` after `dbt run`
          checks that run's rows. -#}
    {%- if flags.WHICH == 'build' -%}
        {%- set log = lara_run_state_relation('lara_incremental_manifest') -%}
        {%- if log is none -%}{{ return('') }}{%- endif -%}
        {%- set limit -%}
            select max(run_started_at) from (
                select
                    run_started_at,
                    max(reflected_through) as reflected_through,
                    max(max(reflected_through)) over (
                        order by run_started_at rows between unbounded preceding and 1 preceding
                    ) as reflected_before
                from {{ log }}
                where run_started_at < {{ lara_run_started_at() }}
                group by run_started_at
            ) as runs
            where reflected_through > coalesce(reflected_before, cast('1900-01-01' as timestamp))
        {%- endset -%}
    {%- else -%}
        {%- set limits = lara_run_state_relation('lara_run_limits') -%}
        {%- if limits is none -%}{{ return('') }}{%- endif -%}
        {%- set limit -%}
            select max(lower_limit) from {{ limits }}
        {%- endset -%}
    {%- endif -%}
    {{ return(limit | trim) }}
{% endmacro %}


{% macro lara_is_full_test() %}
    {#- True when data tests check whole tables: a full refresh, or var
        lara_full_test (the weekly full test run). -#}
    {{ return(flags.FULL_REFRESH or (var('lara_full_test', false) | string | lower) in ('true', '1', 'yes')) }}
{% endmacro %}
