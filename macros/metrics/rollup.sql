{#- Aggregates are reported per combination of dimensions and rolled up
    (metrics.md: overall, per role, per surface, per day).

    lara_cube(rolled, fixed=[]): the GROUP BY list `fixed..., cube(rolled...)`:
    every subset of the `rolled` columns (2^n grouping sets), each holding
    every `fixed` column. Portable to DuckDB and Spark (>= 3.1 for mixed
    fixed + cube lists). -#}
{% macro lara_cube(rolled, fixed=[]) -%}
    {%- for column in fixed -%}{{ column }}, {% endfor -%}
    cube({{ rolled | join(', ') }})
{%- endmacro %}

{#- lara_rolled_up(column, label='all'): the column's value, or `label` on
    rows where it is rolled up (text dimensions). -#}
{% macro lara_rolled_up(column, label='all') -%}
    case when grouping({{ column }}) = 1 then '{{ label }}' else {{ column }} end
{%- endmacro %}

{#- lara_grouping_level(columns): which dimensions a row keeps, e.g.
    'day x surface x role', or 'overall' when all are rolled up. `columns` is
    a list of [column, label] pairs in display order. -#}
{% macro lara_grouping_level(columns) -%}
    coalesce(nullif(concat_ws(' x '
        {%- for pair in columns -%}
        , case when grouping({{ pair[0] }}) = 0 then '{{ pair[1] }}' end
        {%- endfor -%}
    ), ''), 'overall')
{%- endmacro %}


{#- lara_rollup(name, rows, day, dimensions, measures, fixed, period_measures,
    surface_groups): the CTEs of a daily aggregate with period totals, ending
    in CTE `name` (each CTE followed by a comma). The one roll-up every
    aggregate with a day uses.

    - rows: a CTE with one row per counted unit, holding the column `day`
      (a date), the `fixed` and `dimensions` columns and whatever the
      measure expressions read.
    - dimensions: [column, label] pairs rolled up with every combination
      (value 'all' on rolled-up rows); with surface_groups=true the only
      dimension is `surface`, mapped through the seed reporting_surfaces
      (a surface, its group `assistant`, and `all`) instead.
    - fixed: columns every row keeps (never rolled up).
    - measures: [column, aggregate expression] or [column, expression,
      options] additive measures (counts, sums): a period total is the sum
      of the day rows. options: {'type': 'double'} for sums of doubles
      (default bigint); {'stored_as': column} when the model publishes the
      measure under another name (read back from the model's own rows).
    - period_measures: [column, aggregate expression] or [column,
      expression, options] measures that do not add up over days
      (percentiles, distinct counts): their period totals are computed from
      every row of `rows`, or of `period_rows`. options: {'empty': value}
      for a group of the period totals that has no row of `period_rows`
      (0 for a count; default null, as for a percentile).
    - period_rows: a CTE the period totals of the period measures read
      instead of `rows`: every row they count (e.g. the in-scope rows of a
      narrower table), with the fixed and dimension columns and the columns
      their expressions read, so the period totals read no more of the
      history than they need. Day rows still read `rows`, so an expression
      must give the same value over both (filter in the expression, e.g.
      `count(distinct case when is_in_scope then prompt_id end)`, and give
      `period_rows` the column, true on every row). `rows` is then read for
      the day rows only, so it may hold the run's days only
      (lara_in_days_this_run, as agg_stage_costs does).

    Output columns of `name`: grouping_level, is_period_total, the day
    (null on period totals), the fixed columns, the dimensions, the
    measures, the period measures. grouping_level names the dimensions a
    row keeps ('day x surface x role', ..., 'overall').

    Incremental runs (the model is incremental with strategy
    lara_replace_days and the `days_this_run` CTE of
    lara_days_this_run_cte): day rows are computed for the days this run
    recomputes only; the other days' rows are read back from the model
    itself to sum the period totals. So a run costs its days, plus the
    period measures, which read every row; a run that recomputes no day of
    the model (lara_recomputes_a_day: a run with nothing new) reads the
    period measures back from the model's period-total rows (day null,
    stored under the measure's name) instead: no row changes. -#}
{% macro lara_rollup(name, rows, day, dimensions=[], measures=[], fixed=[], period_measures=[], surface_groups=false, period_rows=none) %}
    {%- set dimension_columns = ['reporting_surface'] if surface_groups else (dimensions | map('first') | list) -%}
    {%- set output_dimensions = [] -%}
    {%- if surface_groups -%}
        {%- do output_dimensions.append('surface') -%}
    {%- else -%}
        {%- for pair in dimensions -%}{%- do output_dimensions.append(pair[0]) -%}{%- endfor -%}
    {%- endif -%}
    {%- set keys = fixed + output_dimensions -%}
{{ name }}__units as {{ lara_inline_cte() }} (
{{ lara_rollup_units(rows, surface_groups) }}
),
{%- if period_rows and period_measures %}

{{ name }}__period_units as {{ lara_inline_cte() }} (
{{ lara_rollup_units(period_rows, surface_groups) }}
),
{%- endif %}

{{ name }}__day_rows as (

    select
        {% if surface_groups -%}
        case when reporting_surface = 'all' then 'day' else 'day x surface' end
        {%- else -%}
        concat_ws(' x ', 'day'
            {%- for pair in dimensions -%}
            , case when grouping({{ pair[0] }}) = 0 then '{{ pair[1] }}' end
            {%- endfor -%}
        )
        {%- endif %} as grouping_level,
        {{ day }},
        {%- for column in fixed %}
        {{ column }},
        {%- endfor %}
        {%- if surface_groups %}
        reporting_surface as surface,
        {%- else %}
        {%- for pair in dimensions %}
        {{ lara_rolled_up(pair[0]) }} as {{ pair[0] }},
        {%- endfor %}
        {%- endif %}
        {%- for measure in measures + period_measures %}
        {{ measure[1] }} as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}__units
    where {{ lara_in_days_this_run(day) }}
    group by
        {{ day }}
        {%- for column in fixed %},
        {{ column }}
        {%- endfor %}
        {%- if surface_groups %},
        reporting_surface
        {%- elif dimension_columns %},
        cube({{ dimension_columns | join(', ') }})
        {%- endif %}

),

{{ name }}__all_day_rows as (

    select
        {%- for column in keys %}
        {{ column }},
        {%- endfor %}
        {%- for measure in measures %}
        {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}__day_rows
    {%- if is_incremental() %}
    union all
    select
        {%- for column in keys %}
        {{ column }},
        {%- endfor %}
        {%- for measure in measures %}
        {%- set options = measure[2] if measure | length > 2 else {} %}
        {{ options.get('stored_as', measure[0]) }} as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ this }}
    where {{ day }} is not null and {{ day }} not in (select event_date from days_this_run)
    {%- endif %}

),

{{ name }}__period_sums as (

    select
        {{ lara_rollup_period_level(dimensions, surface_groups) }} as grouping_level,
        {%- for column in keys %}
        {{ column }},
        {%- endfor %}
        {%- for measure in measures %}
        {%- set options = measure[2] if measure | length > 2 else {} %}
        {%- if options.get('type') == 'double' %}
        sum({{ measure[0] }}) as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- else %}
        cast(sum({{ measure[0] }}) as bigint) as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from {{ name }}__all_day_rows
    {%- if keys %}
    group by {{ keys | join(', ') }}
    {%- endif %}

),

{%- if period_measures %}

{{ name }}__period_measures as (
    {%- if is_incremental() and not lara_recomputes_a_day() %}

    select
        {%- for column in keys %}
        {{ column }}{{ ',' if not loop.last or period_measures }}
        {%- endfor %}
        {%- for measure in period_measures %}
        {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ this }}
    where {{ day }} is null
    {%- else %}

    select
        {%- for column in fixed %}
        {{ column }},
        {%- endfor %}
        {%- if surface_groups %}
        reporting_surface as surface,
        {%- else %}
        {%- for pair in dimensions %}
        {{ lara_rolled_up(pair[0]) }} as {{ pair[0] }},
        {%- endfor %}
        {%- endif %}
        {%- for measure in period_measures %}
        {{ measure[1] }} as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}__{{ 'period_units' if period_rows else 'units' }}
    {%- set group_keys = fixed + (['reporting_surface'] if surface_groups else []) %}
    {%- if group_keys or dimension_columns %}
    group by
        {{ group_keys | join(', ') }}
        {%- if dimension_columns and not surface_groups %}{{ ', ' if group_keys }}cube({{ dimension_columns | join(', ') }}){% endif %}
    {%- endif %}
    {%- endif %}

),
{%- endif %}

{{ name }} as (

    select
        grouping_level,
        false as is_period_total,
        {{ day }},
        {%- for column in keys %}
        {{ column }},
        {%- endfor %}
        {%- for measure in measures + period_measures %}
        {{ measure[0] }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ name }}__day_rows
    union all
    select
        {{ name }}__period_sums.grouping_level,
        true as is_period_total,
        cast(null as date) as {{ day }},
        {%- for column in keys %}
        {{ name }}__period_sums.{{ column }},
        {%- endfor %}
        {%- for measure in measures %}
        {{ name }}__period_sums.{{ measure[0] }}{{ ',' if not loop.last or period_measures }}
        {%- endfor %}
        {%- for measure in period_measures %}
        {%- set options = measure[2] if measure | length > 2 else {} %}
        {%- if options.get('empty') is not none %}
        coalesce({{ name }}__period_measures.{{ measure[0] }}, {{ options.get('empty') }}) as {{ measure[0] }}{{ ',' if not loop.last }}
        {%- else %}
        {{ name }}__period_measures.{{ measure[0] }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from {{ name }}__period_sums
    {%- if period_measures %}
    left join {{ name }}__period_measures
        on
            {%- for column in keys %}
            {{ 'and ' if not loop.first }}{{ name }}__period_sums.{{ column }} is not distinct from {{ name }}__period_measures.{{ column }}
            {%- endfor %}
    {%- endif %}

),
{% endmacro %}


{#- The body of lara_rollup's units CTE: the rows of `rows` (a CTE), with
    their reporting surface when the roll-up is by surface groups. -#}
{% macro lara_rollup_units(rows, surface_groups) %}
    select
        {{ rows }}.*
        {%- if surface_groups %},
        reporting_surfaces.reporting_surface
        {%- endif %}
    from {{ rows }}
    {%- if surface_groups %}
    inner join {{ ref('reporting_surfaces') }} as reporting_surfaces
        on {{ rows }}.surface = reporting_surfaces.surface
    {%- endif %}
{% endmacro %}


{#- The grouping_level of a period-total row of lara_rollup, from the values
    of its dimensions: a cube dimension is rolled up where it reads 'all'
    (no logged value is 'all'); with surface groups, the surface 'all' is the
    overall row. -#}
{% macro lara_rollup_period_level(dimensions, surface_groups) -%}
    {%- if surface_groups -%}
    case when surface = 'all' then 'overall' else 'surface' end
    {%- elif dimensions -%}
    coalesce(nullif(concat_ws(' x '
        {%- for pair in dimensions -%}
        , case when {{ pair[0] }} <> 'all' or {{ pair[0] }} is null then '{{ pair[1] }}' end
        {%- endfor -%}
    ), ''), 'overall')
    {%- else -%}
    'overall'
    {%- endif -%}
{%- endmacro %}
