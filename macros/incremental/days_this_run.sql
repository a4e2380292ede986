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
