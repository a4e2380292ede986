{#- One row per retrieval (synthetic ones included): what the attributions
    of non-synthetic actions show about it, the use evidence of Tier 2 and
    the counts of Tier 3 (../shared/spec/metrics.md):

    - GPR, "`has_genuine_positive`: >= 1 user action attributed to it by
      any method, of type `select`, `place`, `edit`, `follow_up`, `export`,
      `share` or `download`" (temporal attributions included);
    - ACR, "`has_agent_consumption`: >= 1 attributed agent action in the same
      `prompt_id` as the retrieval whose asset is in `returned_asset_ids`"
      (consumed_rank not null); "Agent `reject_result` is not consumption";
    - the first GPR and ACR times and the first use evidence (the earlier
      of the two), which the re-search rule and the downstream correction
      rule measure from;
    - the user asset edit of the downstream correction rule: "a user `edit`
      of one of its assets is attributed to it" (consumed_rank not null);
    - clicks (CTR): user clicks attributed by any method;
    - "Retrieval-driven outcomes: outcome events attributed to a retrieval by
      `direct`, `placement` or `document`; flag those in another session
      than the retrieval (cross-session)": credits, so an outcome credited
      to several retrievals by the document rule counts once for each.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run with every
    attribution that credits them (int_action_attributions is complete for
    those sessions by then). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

attributions as (

    select
        retrieval_id,
        actor,
        action_type,
        acted_at,
        action_prompt_id,
        retrieval_prompt_id,
        consumed_rank,
        is_retrieval_driven_outcome,
        is_cross_session
    from {{ ref('int_action_attributions') }}
    where
        not is_action_synthetic
        and {{ lara_in_sessions_this_run('retrieval_session_guid') }}

),

attributed_evidence as (

    select
        retrieval_id,
        min(
            case
                when
                    actor = 'user'
                    and action_type in ('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')
                    then acted_at
            end
        ) as first_genuine_positive_at,
        min(
            case
                when
                    actor = 'agent'
                    and action_type <> 'reject_result'
                    and action_prompt_id = retrieval_prompt_id
                    and consumed_rank is not null
                    then acted_at
            end
        ) as first_agent_consumption_at,
        max(case when actor = 'user' and action_type = 'edit' and consumed_rank is not null then 1 else 0 end) = 1
            as has_user_asset_edit,
        cast(sum(case when actor = 'user' and action_type = 'click' then 1 else 0 end) as bigint) as click_count,
        cast(sum(case when is_retrieval_driven_outcome then 1 else 0 end) as bigint)
            as retrieval_driven_outcome_count,
        cast(sum(case when is_retrieval_driven_outcome and is_cross_session then 1 else 0 end) as bigint)
            as cross_session_outcome_count
    from attributions
    group by retrieval_id

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        attributed_evidence.first_genuine_positive_at is not null as has_genuine_positive,
        attributed_evidence.first_genuine_positive_at,
        attributed_evidence.first_agent_consumption_at is not null as has_agent_consumption,
        attributed_evidence.first_agent_consumption_at,
        case
            when attributed_evidence.first_agent_consumption_at is null
                then attributed_evidence.first_genuine_positive_at
            when attributed_evidence.first_genuine_positive_at is null
                then attributed_evidence.first_agent_consumption_at
            when attributed_evidence.first_genuine_positive_at <= attributed_evidence.first_agent_consumption_at
                then attributed_evidence.first_genuine_positive_at
            else attributed_evidence.first_agent_consumption_at
        end as first_use_evidence_at,
        coalesce(attributed_evidence.has_user_asset_edit, false) as has_user_asset_edit,
        coalesce(attributed_evidence.click_count, 0) as click_count,
        coalesce(attributed_evidence.retrieval_driven_outcome_count, 0) as retrieval_driven_outcome_count,
        coalesce(attributed_evidence.cross_session_outcome_count, 0) as cross_session_outcome_count
    from retrievals
    left join attributed_evidence
        on retrievals.retrieval_id = attributed_evidence.retrieval_id

)

{{ lara_stamp_rows('final') }}
