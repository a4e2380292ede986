{#- Fails with every combination of `combination_of_columns` that occurs more
    than once (a composite primary key), with its `occurrences`.

    Two passes: the first groups a 64-bit hash of the combination
    (lara_hash64) and keeps the hashes seen more than once; the second
    groups, by the columns themselves, only the rows with such a hash. Equal
    combinations have equal hashes (nulls included), so no repeated
    combination is missed; two different combinations that share a hash
    only reach the second pass, which does not report them. The first
    aggregate's key is 8 bytes a row instead of the columns: on 137M rows of
    int_retrieval_assets' shape, 10 s and 1.3 GB spilled against 23 s and
    5.4 GB for one grouping by the columns (docs/performance-notes.md, "Data tests
    over many rows"). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

with

repeated_hashes as (

    select {{ lara_hash64(combination_of_columns) }} as combination_hash
    from {{ model }}
    group by {{ lara_hash64(combination_of_columns) }}
    having count(*) > 1

),

grouped as (

    select
        {{ combination_of_columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    where {{ lara_hash64(combination_of_columns) }} in (
        select repeated_hashes.combination_hash from repeated_hashes
    )
    group by {{ combination_of_columns | join(', ') }}

)

select * from grouped
where occurrences > 1

{% endtest %}
