{#- consumed_rank, metrics.md: 1-based position of the consumed asset in the
    resolved retrieval's returned list, de-duplicated keeping first
    occurrences (as trec_eval sees it); null when the asset is absent from
    the list or the action has no asset. Independent of the displayed order.

    lara_consumed_rank(credits, retrieval_assets): every row of `credits`
    (needs retrieval_id, consumed_asset_id) with consumed_rank;
    `retrieval_assets` is int_retrieval_assets (unique on retrieval_id,
    asset_id). -#}
{% macro lara_consumed_rank(credits, retrieval_assets) -%}
    select
        {{ credits }}.*,
        {{ retrieval_assets }}.asset_rank as consumed_rank
    from {{ credits }}
    left join {{ retrieval_assets }}
        on
            {{ credits }}.retrieval_id = {{ retrieval_assets }}.retrieval_id
            and {{ credits }}.consumed_asset_id = {{ retrieval_assets }}.asset_id
{%- endmacro %}
