{#- Attribution rule 3 (`document`), metrics.md: an export / share /
    download with a document_id and no asset credits every retrieval that
    placed an asset into that document before the event.

    lara_document_placements(actions): one row per (document_id, retrieval_id)
    with first_placed_at, over the `place` actions of `actions` whose lineage
    source (column lineage_retrieval_id: direct or inherited placement) is
    known.

    lara_credit_document_outcomes(actions, document_placements): one row per
    (action_id, retrieval_id) credited: actions of type export, share or
    download with a document_id, no consumed_asset_id and no lineage source of
    their own, joined to the retrievals first placed into that document at
    or before the action (a placement logged in the same instant as the
    export is taken to be in the exported document). -#}
{% macro lara_document_placements(actions) -%}
    select
        document_id,
        lineage_retrieval_id as retrieval_id,
        min(acted_at) as first_placed_at
    from {{ actions }}
    where
        action_type = 'place'
        and document_id is not null
        and lineage_retrieval_id is not null
    group by document_id, lineage_retrieval_id
{%- endmacro %}

{% macro lara_credit_document_outcomes(actions, document_placements) -%}
    select
        {{ actions }}.action_id,
        {{ document_placements }}.retrieval_id
    from {{ actions }}
    inner join {{ document_placements }}
        on
            {{ actions }}.document_id = {{ document_placements }}.document_id
            and {{ document_placements }}.first_placed_at <= {{ actions }}.acted_at
    where
        {{ actions }}.action_type in ('export', 'share', 'download')
        and {{ actions }}.consumed_asset_id is null
        and {{ actions }}.lineage_retrieval_id is null
{%- endmacro %}
