{#- Fails with every combination of `combination_of_columns` that occurs more
    than once (a composite primary key). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

with

grouped as (

    select
        {{ combination_of_columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}

)

select * from grouped
where occurrences > 1

{% endtest %}
