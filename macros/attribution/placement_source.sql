{#- Attribution rule 2 (`placement`), metrics.md v2: an action with no usable
    source id but a consumed_asset_id and a document_id inherits the resolved
    source of the latest earlier `place` of that asset in that document, in
    any session, whatever rule resolved that place.

    lara_inherit_placement_source(actions): one row per action of `actions`
    that has both a document_id and a consumed_asset_id, with
        placement_retrieval_id  the source inherited from the latest earlier
                                resolved place of (document_id, consumed_asset_id)
        chain_root_method       `direct` / `temporal`: the rule that resolved
                                the first place of the chain (null when
                                nothing is inherited)

    No recursion: a place resolves to its direct source, else (rule 2) to the
    source of the latest earlier resolved place, else (rule 4) to its
    temporal source. Every place after the first resolved one therefore
    resolves, and carries forward the latest direct source seen so far; before
    any direct source, it carries the temporal source of the first place rule
    4 resolved. Hence the inherited source is
        the latest earlier place's direct source, when one exists (root `direct`),
        else the temporal source of the first earlier place that has one
        (root `temporal`).

    Order within (document, asset): time, then places before other actions
    logged in the same instant (the placement happened first), then
    action_id. `actions` needs action_id, action_type, document_id,
    consumed_asset_id, acted_at, direct_retrieval_id, temporal_retrieval_id. -#}
{% macro lara_inherit_placement_source(actions) -%}
    {%- set partition_by = ['document_id', 'consumed_asset_id'] -%}
    {%- set order_by = ['acted_at', "case when action_type = 'place' then 0 else 1 end", 'action_id'] -%}
    {%- set frame = 'rows between unbounded preceding and 1 preceding' -%}
    select
        action_id,
        coalesce(inherited_direct_retrieval_id, inherited_temporal_retrieval_id) as placement_retrieval_id,
        case
            when inherited_direct_retrieval_id is not null then 'direct'
            when inherited_temporal_retrieval_id is not null then 'temporal'
        end as chain_root_method
    from (
        select
            action_id,
            {{ lara_last_non_null(
                "case when action_type = 'place' then direct_retrieval_id end",
                partition_by=partition_by, order_by=order_by, frame=frame
            ) }} as inherited_direct_retrieval_id,
            {{ lara_first_non_null(
                "case when action_type = 'place' then temporal_retrieval_id end",
                partition_by=partition_by, order_by=order_by, frame=frame
            ) }} as inherited_temporal_retrieval_id
        from {{ actions }}
        where
            document_id is not null
            and consumed_asset_id is not null
    ) as placement_windows
{%- endmacro %}
