{#- Published metric columns of the behaviour marts: every metric is
    <metric>_numerator, <metric>_denominator, <metric> (null when the
    denominator is 0) and a 95% interval <metric>_ci_low / <metric>_ci_high,
    so BI tools can re-aggregate and readers can tell signal from noise.
    Arguments are column names of an already aggregated CTE, so each
    aggregate is computed once. -#}

{#- lara_rate_with_counts: a proportion with its Wilson score interval
    (macros/metrics lara_rate_columns), preceded by its counts. -#}
{% macro lara_rate_with_counts(metric, numerator_column, denominator_column) -%}
    {{ numerator_column }} as {{ metric }}_numerator,
    {{ denominator_column }} as {{ metric }}_denominator,
    {{ lara_rate_columns(metric, numerator_column, denominator_column) }}
{%- endmacro %}


{#- lara_mean_with_counts: a mean of per-unit values (numerator = their sum,
    denominator = their count) with the normal-approximation interval of
    macros/metrics (lara_mean_ci_low / lara_mean_ci_high: mean -/+ 1.96 s /
    sqrt(n), null below 2 units; a mean is not a proportion, so no Wilson
    interval). The sum of squares is published too, so the interval can be
    re-aggregated. -#}
{% macro lara_mean_with_counts(metric, sum_column, sum_of_squares_column, count_column) -%}
    {{ sum_column }} as {{ metric }}_numerator,
    {{ count_column }} as {{ metric }}_denominator,
    {{ sum_of_squares_column }} as {{ metric }}_sum_of_squares,
    {{ lara_rate(sum_column, count_column) }} as {{ metric }},
    {{ lara_mean_ci_low(sum_column, sum_of_squares_column, count_column) }} as {{ metric }}_ci_low,
    {{ lara_mean_ci_high(sum_column, sum_of_squares_column, count_column) }} as {{ metric }}_ci_high
{%- endmacro %}
