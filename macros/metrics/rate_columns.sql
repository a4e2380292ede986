{#- Published metric columns of the behaviour marts: every metric is
    <metric>_numerator, <metric>_denominator, <metric> (null when the
    denominator is 0) and a 95% interval <metric>_ci_low / <metric>_ci_high,
    so BI tools can re-aggregate and readers can tell signal from noise.
    Arguments are column names of an already aggregated CTE, so each
    aggregate is computed once. -#}

{#- lara_rate_with_counts: a proportion with its Wilson score interval
    (lara_rate_columns of rates.sql), preceded by its counts. -#}
{% macro lara_rate_with_counts(metric, numerator_column, denominator_column) -%}
    {{ numerator_column }} as {{ metric }}_numerator,
    {{ denominator_column }} as {{ metric }}_denominator,
    {{ lara_rate_columns(metric, numerator_column, denominator_column) }}
{%- endmacro %}


{#- lara_mean_with_counts: a mean of per-unit values (numerator = their sum,
    denominator = their count) with the normal-approximation interval of
    rates.sql (lara_mean_ci_low / lara_mean_ci_high: mean -/+ 1.96 s /
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


{#- lara_weighted_rate_columns(metric, weighted_numerator, weighted_denominator,
    denominator_weight_squares): a design-weighted (Hajek ratio) rate
    sum(w y) / sum(w x) over the units with x = 1, and its 95% Wilson
    interval at Kish's effective sample size n_eff = (sum w x)^2 / sum w^2 x
    (the interval of an unweighted sample of n_eff units: it widens with
    unequal weights and ignores the gain from stratification, so it is
    conservative for stratified designs). Columns `<metric>`,
    `<metric>_effective_n`, `<metric>_ci_low`, `<metric>_ci_high`; null
    when no weighted unit is in the denominator. -#}
{% macro lara_weighted_rate_columns(metric, weighted_numerator, weighted_denominator, denominator_weight_squares) -%}
    {%- set effective_n -%}
        case
            when {{ denominator_weight_squares }} > 0
                then {{ weighted_denominator }} * {{ weighted_denominator }} / {{ denominator_weight_squares }}
        end
    {%- endset -%}
    {%- set share = lara_rate(weighted_numerator, weighted_denominator) -%}
    {{ share }} as {{ metric }},
    {{ effective_n }} as {{ metric }}_effective_n,
    {{ lara_wilson_low('(' ~ share ~ ') * (' ~ effective_n ~ ')', effective_n) }} as {{ metric }}_ci_low,
    {{ lara_wilson_high('(' ~ share ~ ') * (' ~ effective_n ~ ')', effective_n) }} as {{ metric }}_ci_high
{%- endmacro %}
