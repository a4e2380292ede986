{#- One row per (action, credited retrieval): the attribution rules of
    metrics.md tried in order per action (a rule that finds nothing passes on
    to the next), each rule computed by its own model:
    1. direct     int_attribution_direct_sources
    2. placement  int_attribution_placement_sources
    3. document   int_attribution_document_credits
    4. temporal   int_attribution_temporal_sources
    This model applies the precedence (macros/attribution/precedence.sql),
    expands document credits to one row per credited retrieval, adds the
    consumed rank and the credited retrieval's session, prompt and time.
    Unattributed actions have no row. Synthetic traffic is kept and flagged
    (public marts drop it): an action without a known prompt whose placement
    chain leads to a synthetic retrieval hangs off synthetic traffic
    (metrics.md v2 scope rules), so is_action_synthetic is set for it here.
    chain_root_method (placement rows): the rule that resolved the first
    place of the chain; is_lineage_backed: direct, document, or placement
    with a direct root (no time-based inference anywhere in the chain).

    Session-grained and incremental (strategy lara_replace_sessions, session
    column action_session_guid): a run recomputes the actions of
    lara_sessions_this_run. -#}
{{ lara_session_grained_config('action_session_guid') }}

with

{{ lara_sessions_this_run_cte() }}

direct_sources as (

    select * from {{ ref('int_attribution_direct_sources') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

placement_sources as (

    select
        action_id,
        placement_retrieval_id,
        chain_root_method
    from {{ ref('int_attribution_placement_sources') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

document_credits as (

    select
        action_id,
        retrieval_id
    from {{ ref('int_attribution_document_credits') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

temporal_sources as (

    select
        action_id,
        temporal_retrieval_id
    from {{ ref('int_attribution_temporal_sources') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

document_credited_actions as (

    select
        action_id,
        count(*) as document_credit_count
    from document_credits
    group by action_id

),

resolved as (

    select
        direct_sources.action_id,
        direct_sources.session_guid,
        direct_sources.prompt_id,
        direct_sources.actor,
        direct_sources.action_type,
        direct_sources.consumed_asset_id,
        direct_sources.document_id,
        direct_sources.acted_at,
        direct_sources.action_date,
        direct_sources.is_outcome_type,
        direct_sources.has_unknown_source_id,
        direct_sources.has_known_prompt,
        direct_sources.is_synthetic,
        direct_sources.direct_retrieval_id,
        placement_sources.placement_retrieval_id,
        placement_sources.chain_root_method,
        temporal_sources.temporal_retrieval_id,
        {{ lara_attribution_method(
            'direct_sources.direct_retrieval_id',
            'placement_sources.placement_retrieval_id',
            'document_credited_actions.action_id is not null',
            'temporal_sources.temporal_retrieval_id'
        ) }} as attribution_method
    from direct_sources
    left join placement_sources
        on direct_sources.action_id = placement_sources.action_id
    left join temporal_sources
        on direct_sources.action_id = temporal_sources.action_id
    left join document_credited_actions
        on direct_sources.action_id = document_credited_actions.action_id

),

single_credits as (

    select
        action_id,
        attribution_method,
        coalesce(direct_retrieval_id, placement_retrieval_id, temporal_retrieval_id) as retrieval_id
    from resolved
    where attribution_method in ('direct', 'placement', 'temporal')

),

document_method_credits as (

    select
        resolved.action_id,
        resolved.attribution_method,
        document_credits.retrieval_id
    from resolved
    inner join document_credits
        on resolved.action_id = document_credits.action_id
    where resolved.attribution_method = 'document'

),

credits as (

    select * from single_credits
    union all
    select * from document_method_credits

),

credited_actions as (

    select
        credits.action_id,
        credits.retrieval_id,
        credits.attribution_method,
        resolved.session_guid,
        resolved.prompt_id,
        resolved.actor,
        resolved.action_type,
        resolved.consumed_asset_id,
        resolved.document_id,
        resolved.acted_at,
        resolved.action_date,
        resolved.is_outcome_type,
        resolved.has_unknown_source_id,
        resolved.has_known_prompt,
        resolved.temporal_retrieval_id,
        case when credits.attribution_method = 'placement' then resolved.chain_root_method end as chain_root_method,
        resolved.is_synthetic
    from credits
    inner join resolved
        on credits.action_id = resolved.action_id

),

retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieved_at,
        is_synthetic
    from {{ ref('int_retrievals_scoped') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrieval_id from credits)
    {%- endif %}

),

{# The credited retrievals' assets. On an incremental run also within the
    credited retrievals' times (an asset row carries its retrieval's time,
    both from stg_lara__retrievals): the same rows, and DuckDB's zone maps
    skip the older row groups instead of probing every asset of the history
    (0.86 -> 0.34 s for the query at 120 days of 100k events,
    docs/performance-notes.md "What grows with the history"). #}
retrieval_assets as (

    select
        retrieval_id,
        asset_id,
        asset_rank
    from {{ ref('int_retrieval_assets') }}
    {%- if is_incremental() %}
    where
        retrieval_id in (select retrieval_id from credits)
        and {{ lara_within_times_of('retrievals') }}
    {%- endif %}

),

ranked as (

    {{ lara_consumed_rank('credited_actions', 'retrieval_assets') }}

),

scoped as (

    select
        ranked.*,
        retrievals.session_guid as retrieval_session_guid,
        retrievals.prompt_id as retrieval_prompt_id,
        retrievals.retrieved_at,
        retrievals.is_synthetic as is_retrieval_synthetic,
        ranked.is_synthetic
        or (
            not ranked.has_known_prompt
            and ranked.attribution_method = 'placement'
            and retrievals.is_synthetic
        ) as is_action_synthetic,
        (
            ranked.attribution_method in ('direct', 'document')
            or (ranked.attribution_method = 'placement' and ranked.chain_root_method = 'direct')
        ) as is_lineage_backed
    from ranked
    inner join retrievals
        on ranked.retrieval_id = retrievals.retrieval_id

),

final as (

    select
        ranked.action_id,
        ranked.retrieval_id,
        ranked.attribution_method,
        ranked.consumed_rank,
        ranked.session_guid <> ranked.retrieval_session_guid as is_cross_session,
        ranked.actor,
        ranked.action_type,
        ranked.acted_at,
        ranked.action_date,
        ranked.session_guid as action_session_guid,
        ranked.retrieval_session_guid,
        ranked.prompt_id as action_prompt_id,
        ranked.retrieval_prompt_id,
        ranked.retrieved_at,
        ranked.consumed_asset_id,
        ranked.document_id,
        ranked.is_outcome_type,
        {{ lara_is_lineage_method('ranked.attribution_method') }} as is_lineage_method,
        ranked.actor = 'user'
        and ranked.is_outcome_type
        and {{ lara_is_lineage_method('ranked.attribution_method') }} as is_retrieval_driven_outcome,
        ranked.chain_root_method,
        ranked.is_lineage_backed,
        ranked.has_unknown_source_id,
        ranked.temporal_retrieval_id,
        {#- Agreement population (metrics.md v2): direct, or placement with a
            direct root, with a consumed asset. -#}
        case
            when
                ranked.attribution_method in ('direct', 'placement')
                and ranked.is_lineage_backed
                and ranked.consumed_asset_id is not null
                then coalesce(ranked.temporal_retrieval_id = ranked.retrieval_id, false)
        end as is_temporal_agreement,
        ranked.is_action_synthetic,
        ranked.is_retrieval_synthetic,
        ranked.is_action_synthetic or ranked.is_retrieval_synthetic as is_synthetic
    from scoped as ranked

)

{{ lara_stamp_rows('final', 'action_session_guid') }}
