{#
    Bulk runs (DuckDB). An incremental run whose sessions this run are at
    least var lara_bulk_run_share of all sessions (raw files moved to
    another LARA_RAW_PATH, a backfill of many days) recomputes the
    session-grained models whole: lara_sessions_this_run lists every session
    (reason `bulk`), those models compile to their full-build SQL
    (is_incremental() is false for them) and the strategy
    lara_replace_sessions empties the table before inserting. The results
    are a full build's; what changes is the plan. On an incremental run the
    models filter every read by semi-joins on the run's sessions, which
    DuckDB estimates at a fixed 20% of their input whatever the run's size:
    a run that recomputes the whole history is planned as a small one, the
    wide rows of every session become the build side of several nested
    joins, and at 6M events the 3GB pool ran out (fct_retrievals,
    fct_prompts; README "Incremental runs and late events"). A full build's
    plans fit it.
#}

{% macro is_incremental() %}
    {#- dbt's is_incremental(), false for session-grained models (strategy
        lara_replace_sessions) in a bulk run. -#}
    {%- set incremental = dbt.is_incremental() -%}
    {%- if incremental and config.get('incremental_strategy') == 'lara_replace_sessions' -%}
        {{ return(not lara_is_bulk_run()) }}
    {%- endif -%}
    {{ return(incremental) }}
{% endmacro %}


{% macro lara_is_bulk_run() %}
    {#- Whether this run is a bulk run: a lara_sessions_this_run row has
        reason `bulk`. Asked of the warehouse once per model (the answer is
        kept on the model while it compiles): lara_sessions_this_run is
        upstream of every session-grained model, so it is already this
        run's. False at parse time, on Spark, and when the relation cannot
        be read. -#}
    {%- if not execute or target.type != 'duckdb' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if model is mapping and '_lara_is_bulk_run' in model -%}
        {{ return(model['_lara_is_bulk_run']) }}
    {%- endif -%}
    {%- set run_sessions = ref('lara_sessions_this_run') -%}
    {%- set is_bulk = false -%}
    {%- if load_relation(run_sessions) is not none -%}
        {%- set result = run_query(
            "select count(*) > 0 from (select 1 from " ~ run_sessions ~ " where reason = 'bulk' limit 1) as bulk"
        ) -%}
        {%- set is_bulk = result is not none and result.columns[0].values()[0] -%}
    {%- endif -%}
    {%- if model is mapping -%}
        {%- do model.update({'_lara_is_bulk_run': is_bulk}) -%}
    {%- endif -%}
    {{ return(is_bulk) }}
{% endmacro %}


{% macro lara_bulk_run_share() %}
    {#- var lara_bulk_run_share (env LARA_BULK_RUN_SHARE) as a number >= 0,
        checked as lara_check_vars checks it (lara_var_kinds): Jinja's
        `float` filter would read a typo as 0, and make every run that
        touches a session a bulk run. -#}
    {%- set value = var('lara_bulk_run_share') -%}
    {%- set problem = lara_var_problem('lara_bulk_run_share', value, 'number', 0) -%}
    {%- if problem -%}
        {{ exceptions.raise_compiler_error(
            "var lara_bulk_run_share (env LARA_BULK_RUN_SHARE) must be " ~ problem
            ~ " (a share of the sessions; above 1: never a bulk run), got " ~ (value | tojson)
        ) }}
    {%- endif -%}
    {{ return(lara_as_number(value)) }}
{% endmacro %}
