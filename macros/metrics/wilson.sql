{#- 95% Wilson score interval of a proportion (z = 1.96 by default):
    lara_wilson_low(numerator, denominator) / lara_wilson_high(...), SQL
    expressions over counts; null when the denominator is 0 (or null);
    exactly 0 (low) when the numerator is 0 and 1 (high) when it equals the
    denominator, clamped to [0, 1] against floating-point noise elsewhere.
        centre    = (p + z^2 / 2n) / (1 + z^2 / n)
        half      = z * sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)
    with p = numerator / denominator, n = denominator. -#}
{% macro lara_wilson_low(numerator, denominator, z=1.96) -%}
    {{ lara_wilson_bound(numerator, denominator, z, '-') }}
{%- endmacro %}

{% macro lara_wilson_high(numerator, denominator, z=1.96) -%}
    {{ lara_wilson_bound(numerator, denominator, z, '+') }}
{%- endmacro %}

{% macro lara_wilson_bound(numerator, denominator, z, sign) -%}
    {%- set n = 'cast(' ~ denominator ~ ' as double)' -%}
    {%- set p = '(cast(' ~ numerator ~ ' as double) / ' ~ n ~ ')' -%}
    {%- set z2 = (z * z) | string -%}
    case
        when coalesce({{ denominator }}, 0) <= 0 then null
        {%- if sign == '-' %}
        when {{ numerator }} = 0 then 0.0
        {%- else %}
        when {{ numerator }} = {{ denominator }} then 1.0
        {%- endif %}
        else
            {{ 'greatest(0.0, ' if sign == '-' else 'least(1.0, ' }}(
                {{ p }} + {{ z2 }} / (2.0 * {{ n }})
                {{ sign }} {{ z }} * sqrt({{ p }} * (1.0 - {{ p }}) / {{ n }} + {{ z2 }} / (4.0 * {{ n }} * {{ n }}))
            ) / (1.0 + {{ z2 }} / {{ n }}))
    end
{%- endmacro %}
