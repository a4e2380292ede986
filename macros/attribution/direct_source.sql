{#- Attribution rule 1 (`direct`), metrics.md: the action's
    source_retrieval_id names a known retrieval.

    lara_resolve_direct_source(actions, retrievals): every row of `actions`
    (needs source_retrieval_id) with
        direct_retrieval_id    the source id when it names a row of `retrievals`
        has_unknown_source_id  a source id is set but names no known retrieval
                               (it is then treated as absent, so the action
                               falls through to the next rules)
    `retrievals` must be unique on retrieval_id. -#}
{% macro lara_resolve_direct_source(actions, retrievals) -%}
    select
        {{ actions }}.*,
        {{ retrievals }}.retrieval_id as direct_retrieval_id,
        coalesce(
            {{ actions }}.source_retrieval_id is not null
            and {{ retrievals }}.retrieval_id is null,
            false
        ) as has_unknown_source_id
    from {{ actions }}
    left join {{ retrievals }}
        on {{ actions }}.source_retrieval_id = {{ retrievals }}.retrieval_id
{%- endmacro %}
