{#- lara_rate(numerator, denominator): numerator / denominator as a double,
    null when the denominator is 0 (or null). -#}
{% macro lara_rate(numerator, denominator) -%}
    case
        when {{ denominator }} > 0
            then cast({{ numerator }} as double) / cast({{ denominator }} as double)
    end
{%- endmacro %}

{#- 95% normal-approximation interval of a mean from re-aggregable parts
    (sum, sum of squares, count): mean -/+ z * s / sqrt(n) with the sample
    standard deviation s; null when count < 2. For means of bounded per-
    retrieval scores (precision@K, NDCG@K), where Wilson does not apply. -#}
{% macro lara_mean_ci_low(value_sum, value_sum_of_squares, value_count, z=1.96) -%}
    {{ lara_mean_ci_bound(value_sum, value_sum_of_squares, value_count, z, '-') }}
{%- endmacro %}

{% macro lara_mean_ci_high(value_sum, value_sum_of_squares, value_count, z=1.96) -%}
    {{ lara_mean_ci_bound(value_sum, value_sum_of_squares, value_count, z, '+') }}
{%- endmacro %}

{% macro lara_mean_ci_bound(value_sum, value_sum_of_squares, value_count, z, sign) -%}
    {%- set n = 'cast(' ~ value_count ~ ' as double)' -%}
    case
        when {{ value_count }} > 1 then
            {{ value_sum }} / {{ n }}
            {{ sign }} {{ z }} * sqrt(
                greatest(
                    0.0,
                    ({{ value_sum_of_squares }} - {{ value_sum }} * {{ value_sum }} / {{ n }}) / ({{ n }} - 1.0)
                ) / {{ n }}
            )
    end
{%- endmacro %}

{#- lara_count_if(condition): rows where `condition` is true, as a bigint
    (null counts as false). Aggregate expression. -#}
{% macro lara_count_if(condition) -%}
    cast(sum(case when {{ condition }} then 1 else 0 end) as bigint)
{%- endmacro %}

{#- lara_rate_columns(name, numerator, denominator): `<name>`,
    `<name>_ci_low`, `<name>_ci_high` (the rate and its 95% Wilson interval)
    as select-list items. -#}
{% macro lara_rate_columns(name, numerator, denominator) -%}
    {{ lara_rate(numerator, denominator) }} as {{ name }},
    {{ lara_wilson_low(numerator, denominator) }} as {{ name }}_ci_low,
    {{ lara_wilson_high(numerator, denominator) }} as {{ name }}_ci_high
{%- endmacro %}
