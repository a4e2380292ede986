{#- Attribution rule 2 (`placement`), metrics.md: an action with no usable
    source id but a consumed_asset_id and a document_id inherits the resolved
    source of the latest earlier `place` of that asset in that document, in
    any session.

    lara_inherit_placement_source(actions): one row per action of `actions`
    that has both a document_id and a consumed_asset_id, with
        placement_retrieval_id  the lineage source inherited from the latest
                                earlier place of (document_id, consumed_asset_id)

    Chained placements: a place without a usable source id inherits in turn
    from the place before it, so the inherited source is the direct source of
    the latest earlier place that has one (a carry-forward window, no
    recursion). Only lineage (direct or inherited) sources are carried;
    a place resolved only by the temporal fallback passes nothing on.

    Order within (document, asset): time, then places before other actions
    logged in the same instant (the placement happened first), then
    action_id. `actions` needs action_id, action_type, document_id,
    consumed_asset_id, acted_at, direct_retrieval_id. -#}
{% macro lara_inherit_placement_source(actions) -%}
    select
        action_id,
        {{ lara_last_non_null(
            "case when action_type = 'place' then direct_retrieval_id end",
            partition_by=['document_id', 'consumed_asset_id'],
            order_by=['acted_at', "case when action_type = 'place' then 0 else 1 end", 'action_id'],
            frame='rows between unbounded preceding and 1 preceding'
        ) }} as placement_retrieval_id
    from {{ actions }}
    where
        document_id is not null
        and consumed_asset_id is not null
{%- endmacro %}
