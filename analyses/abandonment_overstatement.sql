{#- How much session-level abandonment overstates (LARA paper: chat
    abandonment 59.5%, overstated because exports started in chat are
    logged under a later editor session_guid). Per assistant surface, whole
    period: naive vs lineage-corrected abandonment with 95% Wilson
    intervals, the overstatement (sessions abandoned naively, not after
    correction, / sessions) and its relative size, and where the rescuing
    outcomes were logged. -#}
with

abandonment as (

    select * from {{ ref('agg_abandonment') }}
    where is_period_total and surface in ('chat', 'editor_assistant', 'assistant')

),

compared as (

    select
        surface,
        assistant_session_count,
        abandonment_rate_naive_numerator,
        abandonment_rate_naive,
        abandonment_rate_naive_ci_low,
        abandonment_rate_naive_ci_high,
        abandonment_rate_lineage_corrected_numerator,
        abandonment_rate_lineage_corrected,
        abandonment_rate_lineage_corrected_ci_low,
        abandonment_rate_lineage_corrected_ci_high,
        abandonment_overstatement_numerator as overstated_session_count,
        abandonment_overstatement,
        abandonment_overstatement_ci_low,
        abandonment_overstatement_ci_high,
        {{ lara_rate('abandonment_overstatement_numerator', 'abandonment_rate_naive_numerator') }}
            as share_of_naively_abandoned_sessions_not_abandoned,
        in_session_outcome_count,
        outside_session_outcome_count
    from abandonment

)

select * from compared
order by surface
