{#- The reporting grain of the behaviour aggregates. Each row of a
    behaviour aggregate is one (activity_date, surface): activity_date null
    and is_period_total true for the whole period; surface a surface, a
    surface group (`assistant` = chat + editor_assistant) or `all` (seed
    reporting_surfaces).

    lara_reporting_grouping_level(is_period_total, surface): the label of
    the row's grain, in the words of lara_grouping_level (rollup.sql):
    `overall`, `day`, `surface` or `day x surface`. -#}
{% macro lara_reporting_grouping_level(is_period_total, surface) -%}
    case
        when {{ is_period_total }} and {{ surface }} = 'all' then 'overall'
        when {{ surface }} = 'all' then 'day'
        when {{ is_period_total }} then 'surface'
        else 'day x surface'
    end
{%- endmacro %}
