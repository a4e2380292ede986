{#
    Data tests sized to the run. dbt wraps the model a generic test reads in
    get_where_subquery (the `where` config); this override adds, on
    incremental runs, a filter to the rows the run wrote: for a test on an
    incremental model of this project (or a staging view over one), only the
    rows this run recomputed or loaded, by their `_lara_loaded_at` (config
    lara_loaded_at_column):
    - in `dbt build`, the rows stamped with this invocation's start (a
      constant: the engine skips the row groups of older loads). A model that
      wrote nothing in this build has nothing to check: a run with nothing
      new does not test the run before's rows again. (A test that fails in
      `dbt build` keeps the load log's watermark, so the next run rewrites
      those rows and tests them again.)
    - in `dbt test` (after a `dbt run`) and any other command, the rows of
      the model's newest load.
    Everything is checked instead on a full refresh, with var
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
    {%- if flags.WHICH == 'build' -%}
        {{ return(column ~ ' >= ' ~ lara_run_started_at()) }}
    {%- endif -%}
    {{ return(column ~ ' >= (select max(' ~ column ~ ') from ' ~ relation ~ ')') }}
{% endmacro %}


{% macro lara_is_full_test() %}
    {#- True when data tests check whole tables: a full refresh, or var
        lara_full_test (the weekly full test run). -#}
    {{ return(flags.FULL_REFRESH or (var('lara_full_test', false) | string | lower) in ('true', '1', 'yes')) }}
{% endmacro %}
