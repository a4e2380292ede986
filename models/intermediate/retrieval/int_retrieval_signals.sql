{#- One row per retrieval (synthetic included, flagged): the Tier 2 flags and
    Tier 3 counts of ../shared/spec/metrics.md, joined from the models that
    each implement one rule:

    - int_retrieval_attributed_evidence: GPR, ACR, first use evidence, user
      asset edits, clicks, retrieval-driven and cross-session outcomes;
    - int_retrieval_reject_failures: ORF (a), reject;
    - int_retrieval_research_failures: ORF (b), re-search;
    - int_retrieval_substitution_failures: ORF (c), substitution;
    - int_retrieval_downstream_corrections: downstream correction;
    - int_retrieval_consumption_confirmations: agent consumption confirmed
      by a later user action (v2).

    The flags that combine rules are computed here: "`has_observable_failure`
    (ORF): any of (a) ... (b) ... (c)" and "`is_unobserved` (UOR): none of
    the three" (GPR, ACR, ORF: "The first three may overlap; the fourth
    excludes them"). A table, not a view: fct_retrievals, the aggregates and
    the behaviour marts read it.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run, which every model
    joined here has recomputed in the same run. The joins are left joins
    from the retrievals without defaults, so a retrieval missing from a
    rule's model shows as null flags (not_null tests on each flag) rather
    than as a silent false. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid,
        is_synthetic,
        is_in_tier_scope
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

attributed_evidence as (

    select * from {{ ref('int_retrieval_attributed_evidence') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

reject_failures as (

    select * from {{ ref('int_retrieval_reject_failures') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

research_failures as (

    select * from {{ ref('int_retrieval_research_failures') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

substitution_failures as (

    select * from {{ ref('int_retrieval_substitution_failures') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

consumption_confirmations as (

    select * from {{ ref('int_retrieval_consumption_confirmations') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

downstream_corrections as (

    select * from {{ ref('int_retrieval_downstream_corrections') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

final as (

    select
        retrievals.retrieval_id,
        attributed_evidence.has_genuine_positive,
        attributed_evidence.first_genuine_positive_at,
        attributed_evidence.has_agent_consumption,
        attributed_evidence.first_agent_consumption_at,
        consumption_confirmations.has_confirmed_agent_consumption,
        consumption_confirmations.first_confirmed_at as first_consumption_confirmed_at,
        attributed_evidence.first_use_evidence_at,
        reject_failures.has_reject_failure
        or research_failures.has_research_failure
        or substitution_failures.has_substitution_failure as has_observable_failure,
        reject_failures.has_reject_failure,
        reject_failures.has_attributed_reject,
        reject_failures.has_prompt_reject,
        research_failures.has_research_failure,
        research_failures.first_research_at,
        substitution_failures.has_substitution_failure,
        not attributed_evidence.has_genuine_positive
        and not attributed_evidence.has_agent_consumption
        and not reject_failures.has_reject_failure
        and not research_failures.has_research_failure
        and not substitution_failures.has_substitution_failure as is_unobserved,
        downstream_corrections.has_downstream_correction,
        downstream_corrections.has_rewrite_after_evidence,
        downstream_corrections.has_user_asset_edit,
        attributed_evidence.click_count,
        attributed_evidence.retrieval_driven_outcome_count,
        attributed_evidence.cross_session_outcome_count,
        retrievals.is_synthetic,
        retrievals.is_in_tier_scope,
        retrievals.session_guid
    from retrievals
    left join attributed_evidence
        on retrievals.retrieval_id = attributed_evidence.retrieval_id
    left join reject_failures
        on retrievals.retrieval_id = reject_failures.retrieval_id
    left join research_failures
        on retrievals.retrieval_id = research_failures.retrieval_id
    left join substitution_failures
        on retrievals.retrieval_id = substitution_failures.retrieval_id
    left join downstream_corrections
        on retrievals.retrieval_id = downstream_corrections.retrieval_id
    left join consumption_confirmations
        on retrievals.retrieval_id = consumption_confirmations.retrieval_id

)

{{ lara_stamp_rows('final') }}
