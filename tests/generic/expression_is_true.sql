{#- Fails with every row for which `expression` is not true (null fails too). -#}
{% test expression_is_true(model, expression) %}

select * from {{ model }}
where not coalesce({{ expression }}, false)

{% endtest %}
