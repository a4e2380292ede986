{#- One row per retrieval (synthetic ones included): ORF cause (b) of
    ../shared/spec/metrics.md, Tier 2: "re-search: a later retrieval in the
    same session within var `research_window_s` (default 600) whose prompt
    is a `rewrite` of a later turn (another prompt than this retrieval's),
    or whose query has token Jaccard similarity >= var
    `research_similarity_min` (default 0.5) with this one; either way only
    while this retrieval had no GPR/ACR evidence before the later
    retrieval".

    Reading: "later" is strictly later in time; "within N seconds includes
    N" (Scope rules), so a later retrieval exactly research_window_s
    seconds after counts. Any later retrieval of the session counts, not
    only the next one, and one of the same prompt only by query similarity
    (a rewrite prompt must be another prompt than this retrieval's). A null
    query is never similar. Rewrite prompts are int_prompt_rewrite_flags.
    "No GPR/ACR evidence before the later retrieval": the first use
    evidence (int_retrieval_attributed_evidence) is null or at or after the
    later retrieval's time, so evidence after it does not cancel the
    failure. first_research_at is the time of the earliest later retrieval
    that counted.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run (the rule stays
    within a session), with the rewrite flags of their prompts, read by
    prompt_id: a retrieval may name a prompt logged in another session,
    which the run need not recompute. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

{# Each query tokenised here, once per retrieval, not once per pair below. #}
retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieved_at,
        is_synthetic,
        {{ lara_tokens('query_text') }} as query_tokens
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

use_evidence as (

    select
        retrieval_id,
        first_use_evidence_at
    from {{ ref('int_retrieval_attributed_evidence') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

prompt_rewrites as (

    select
        prompt_id,
        is_rewrite
    from {{ ref('int_prompt_rewrite_flags') }}
    where {{ lara_in_prompts_of('retrievals') }}

),

earlier_retrievals as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        retrievals.retrieved_at,
        retrievals.is_synthetic,
        retrievals.query_tokens,
        use_evidence.first_use_evidence_at
    from retrievals
    left join use_evidence
        on retrievals.retrieval_id = use_evidence.retrieval_id

),

later_retrievals as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        retrievals.retrieved_at,
        retrievals.is_synthetic,
        retrievals.query_tokens,
        coalesce(prompt_rewrites.is_rewrite, false) as is_rewrite_prompt
    from retrievals
    left join prompt_rewrites
        on retrievals.prompt_id = prompt_rewrites.prompt_id

),

{# Every (earlier, later) pair of the window with the earlier retrieval still
    without evidence, and the token counts of its two queries. Materialised
    (a CTE boundary on DuckDB): inlined, the optimiser moved the similarity
    test below into the self-join's condition, where it ran on every pair of
    retrievals of a session, more than the pairs of the window, and took 4.5
    of the model's 7 s on 1.45M retrievals. #}
candidate_pairs as {{ lara_materialized_cte() }} (

    select
        earlier_retrievals.retrieval_id,
        later_retrievals.retrieved_at as later_retrieved_at,
        later_retrievals.is_rewrite_prompt
        and later_retrievals.prompt_id <> earlier_retrievals.prompt_id as is_rewrite_of_another_prompt,
        {{ lara_shared_token_count('earlier_retrievals.query_tokens', 'later_retrievals.query_tokens') }}
            as shared_token_count,
        {{ lara_list_length('earlier_retrievals.query_tokens') }} as earlier_token_count,
        {{ lara_list_length('later_retrievals.query_tokens') }} as later_token_count
    from earlier_retrievals
    inner join later_retrievals
        on
            earlier_retrievals.session_guid = later_retrievals.session_guid
            -- synthetic scope is per prompt (metrics.md v2): a synthetic
            -- retrieval never re-searches a real one
            and earlier_retrievals.is_synthetic = later_retrievals.is_synthetic
            and earlier_retrievals.retrieved_at < later_retrievals.retrieved_at
            and {{ lara_seconds_between('earlier_retrievals.retrieved_at', 'later_retrievals.retrieved_at') }}
            <= {{ var('research_window_s') }}
    where
        earlier_retrievals.first_use_evidence_at is null
        or earlier_retrievals.first_use_evidence_at >= later_retrievals.retrieved_at

),

{# A rewrite prompt of another turn, or token Jaccard >= the threshold
    (lara_token_set_jaccard's definition, from the counts). #}
research_pairs as (

    select
        retrieval_id,
        later_retrieved_at
    from candidate_pairs
    where
        is_rewrite_of_another_prompt
        or coalesce(
            {{ lara_token_count_jaccard('shared_token_count', 'earlier_token_count', 'later_token_count') }}
            >= {{ var('research_similarity_min') }},
            false
        )

),

researches as (

    select
        retrieval_id,
        min(later_retrieved_at) as first_research_at
    from research_pairs
    group by retrieval_id

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        researches.retrieval_id is not null as has_research_failure,
        researches.first_research_at
    from retrievals
    left join researches
        on retrievals.retrieval_id = researches.retrieval_id

)

{{ lara_stamp_rows('final') }}
