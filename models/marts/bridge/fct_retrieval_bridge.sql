{#- The production analogue of the bridge evidence: one row per labelled
    in-scope retrieval with its static Tier 1 quality (NDCG@K and its
    mid-rank percentile), whether it was used (Tier 2) or led to an outcome
    (Tier 3), whether a later retrieval of its session succeeded, and the
    bridge-retrieval flag. Definitions and decisions: _production_bridge__models.yml.

    Recomputed whole (the percentile is over every labelled retrieval), on
    a run that loaded a row of any contract table only (lara_whole_table_config):
    a run with nothing new keeps the table as it is. -#}
{%- set tie_decimals = var('bridge_tie_decimals', 9) -%}
{{ lara_whole_table_config() }}

with

{{ lara_tables_this_run_cte() }}

{# Read by the session aggregate and the labelled rows: inlined, not held
    in memory with every column (lara_inline_cte). #}
retrievals as {{ lara_inline_cte() }} (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        surface,
        retrieval_role,
        retrieved_at,
        retrieval_date,
        is_labelled,
        ndcg_at_k,
        has_genuine_positive,
        has_agent_consumption,
        has_observable_failure,
        retrieval_driven_outcome_count
    from {{ ref('fct_retrievals') }}
    where is_in_tier_scope and {{ lara_if_tables_loaded() }}

),

{# Success needs no relevance label: every in-scope retrieval of the session
    can be the successful later one. #}
successes as {{ lara_inline_cte() }} (

    select
        *,
        has_genuine_positive or has_agent_consumption as is_used,
        retrieval_driven_outcome_count >= 1 as has_outcome,
        has_genuine_positive
        or has_agent_consumption
        or retrieval_driven_outcome_count >= 1 as is_successful
    from retrievals

),

{# The session's last successful retrieval: one aggregate per session (not
    a window over every retrieval, which carried all their columns through
    its sort), joined to the labelled retrievals. #}
session_successes as (

    select
        session_guid,
        max(case when is_successful then retrieved_at end) as last_successful_retrieved_at
    from successes
    group by session_guid

),

labelled as (

    select
        successes.*,
        successes.ndcg_at_k < {{ var('tier1_good_ndcg') }} as is_low_quality,
        coalesce(
            session_successes.last_successful_retrieved_at > successes.retrieved_at, false
        ) as is_followed_by_successful_retrieval
    from successes
    inner join session_successes
        on successes.session_guid = session_successes.session_guid
    where successes.is_labelled

),

final as (

    select
        -- ids
        retrieval_id,
        prompt_id,
        session_guid,
        -- strings
        surface,
        retrieval_role,
        case
            when not is_low_quality then null
            when is_used and is_followed_by_successful_retrieval then 'used_and_followed_by_success'
            when is_used then 'used'
            when is_followed_by_successful_retrieval then 'followed_by_success'
        end as bridge_path,
        -- numerics
        ndcg_at_k,
        {# ranked on NDCG@K rounded to var bridge_tie_decimals: ties are not split
           by floating-point noise (decision 5) #}
        {{ lara_mid_rank_percentile('round(ndcg_at_k, ' ~ tie_decimals ~ ')', 'ndcg_at_k is not null') }}
            as ndcg_percentile,
        retrieval_driven_outcome_count,
        cast({{ var('tier1_good_ndcg') }} as double) as tier1_good_ndcg,
        -- booleans
        has_genuine_positive,
        has_agent_consumption,
        is_used,
        has_outcome,
        has_observable_failure,
        is_followed_by_successful_retrieval,
        is_low_quality,
        is_low_quality and (is_used or is_followed_by_successful_retrieval) as is_bridge_retrieval,
        -- timestamps
        retrieved_at,
        retrieval_date,
        -- bookkeeping
        {{ lara_run_started_at() }} as _lara_loaded_at
    from labelled

)

select * from final
