{#
    The `relationships` data test, sized to the run like every other data
    test (get_where_subquery): the child side reads the rows this run wrote.
    dbt's own test then joins them to every row of the parent (`to`): on a
    run that wrote a few rows it builds the join over the whole history of
    the parent, so a scheduled run's test cost grows with the history, not
    with the run. Here, when the child is restricted to the run's rows
    (lara_test_rows_this_run), the parent is first narrowed to the keys the
    child names (a semi-join built on the child's few keys; the parent's key
    column is scanned once and nothing of it is held). The result is the
    same: a child value fails when no parent row has it, and parent rows no
    child names never matched one. On full builds, full test runs and tests
    scoped to the whole table the child is the whole table, and dbt's form
    is kept (the semi-join would hash as many keys as the join it narrows).
#}
{% macro default__test_relationships(model, column_name, to, field) %}

with child as (
    select {{ column_name }} as from_field
    from {{ model }}
    where {{ column_name }} is not null
),

parent as (
    select {{ field }} as to_field
    from {{ to }}
    {%- if lara_test_rows_this_run(model) %}
    where {{ field }} in (select child.from_field from child)
    {%- endif %}
)

select
    from_field

from child
left join parent
    on child.from_field = parent.to_field

where parent.to_field is null

{% endmacro %}
