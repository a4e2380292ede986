{#- Attribution rule 4 (`temporal`, the fallback for logs without lineage),
    metrics.md: the most recent retrieval in the same session at or before
    the action whose returned_asset_ids contains consumed_asset_id.

    lara_temporal_candidates(actions, session_assets): one row per (action,
    candidate retrieval), with the action's session and candidate_rank (1 =
    the rule's answer; keep candidate_rank = 1). `actions` needs action_id,
    session_guid, consumed_asset_id, acted_at; `session_assets` one row per
    (retrieval, distinct returned asset) with retrieval_id, session_guid,
    asset_id, retrieved_at. Retrievals logged in the same instant are ordered by
    retrieval_id (the greatest wins), so the answer is deterministic.

    Computed for every action with an asset, whatever its lineage: the
    agreement rate compares this answer with the lineage one. An equality
    hash join on (session, asset): the fan-out is the number of times the
    asset was returned in that session. -#}
{% macro lara_temporal_candidates(actions, session_assets) -%}
    select
        {{ actions }}.action_id,
        {{ actions }}.session_guid,
        {{ session_assets }}.retrieval_id,
        row_number() over (
            partition by {{ actions }}.action_id
            order by {{ session_assets }}.retrieved_at desc, {{ session_assets }}.retrieval_id desc
        ) as candidate_rank
    from {{ actions }}
    inner join {{ session_assets }}
        on
            {{ actions }}.session_guid = {{ session_assets }}.session_guid
            and {{ actions }}.consumed_asset_id = {{ session_assets }}.asset_id
            and {{ session_assets }}.retrieved_at <= {{ actions }}.acted_at
{%- endmacro %}


{#- lara_temporal_source(actions, session_assets): one row per action of
    `actions` that rule 4 attributes, with its session_guid (carried, so a
    model needs no join back to `actions`) and temporal_retrieval_id (the
    candidate_rank = 1 row of lara_temporal_candidates). Dispatched: DuckDB
    answers it with an ASOF join over (session, asset) after keeping the
    greatest retrieval_id per (session, asset, retrieved_at), which sorts
    instead of materialising every (action, earlier retrieval) pair; other
    engines rank the candidates. -#}
{% macro lara_temporal_source(actions, session_assets) -%}
    {{ return(adapter.dispatch('lara_temporal_source', 'lara')(actions, session_assets)) }}
{%- endmacro %}

{% macro default__lara_temporal_source(actions, session_assets) -%}
    select
        action_id,
        session_guid,
        retrieval_id as temporal_retrieval_id
    from (
        {{ lara_temporal_candidates(actions, session_assets) }}
    ) as temporal_candidates
    where candidate_rank = 1
{%- endmacro %}

{% macro duckdb__lara_temporal_source(actions, session_assets) -%}
    select
        {{ actions }}.action_id,
        {{ actions }}.session_guid,
        latest_assets.retrieval_id as temporal_retrieval_id
    from {{ actions }}
    asof inner join (
        select
            session_guid,
            asset_id,
            retrieved_at,
            max(retrieval_id) as retrieval_id
        from {{ session_assets }}
        where retrieved_at is not null
        group by session_guid, asset_id, retrieved_at
    ) as latest_assets
        on
            {{ actions }}.session_guid = latest_assets.session_guid
            and {{ actions }}.consumed_asset_id = latest_assets.asset_id
            and {{ actions }}.acted_at >= latest_assets.retrieved_at
{%- endmacro %}
