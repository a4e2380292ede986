{#- One row per retrieval (synthetic ones included): the downstream
    correction of ../shared/spec/metrics.md, Tier 2: "A user keeping the
    asset and changing only the edit or generation is a downstream
    correction, never a retrieval failure. Flag `has_downstream_correction`
    when, after the first GPR or ACR evidence, the session's first prompt
    after that evidence is a rewrite or a user `edit` of one of its assets
    is attributed to it."

    Reading: the first use evidence is first_use_evidence_at of
    int_retrieval_attributed_evidence; "after" is strictly after it; the
    first prompt is the earliest prompt of the retrieval's session by time,
    then prompt_id, and only that one counts (a rewrite following a
    non-rewrite prompt does not); "rewrite" is int_prompt_rewrite_flags. A
    retrieval without use evidence has no rewrite after it. The user asset
    edit is has_user_asset_edit of int_retrieval_attributed_evidence (a user
    edit attributed by any method whose asset is in the returned list).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

use_evidence as (

    select
        retrieval_id,
        session_guid,
        first_use_evidence_at,
        has_user_asset_edit
    from {{ ref('int_retrieval_attributed_evidence') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

prompt_rewrites as (

    select
        prompt_id,
        session_guid,
        prompted_at,
        is_rewrite
    from {{ ref('int_prompt_rewrite_flags') }}
    -- Synthetic scope is per prompt (metrics.md v2): a synthetic probe is
    -- never the session's next prompt.
    where not is_synthetic and {{ lara_in_session_rows_this_run('session_guid') }}

),

prompts_after_evidence as (

    select
        use_evidence.retrieval_id,
        prompt_rewrites.is_rewrite,
        row_number() over (
            partition by use_evidence.retrieval_id
            order by prompt_rewrites.prompted_at, prompt_rewrites.prompt_id
        ) as prompt_order
    from use_evidence
    inner join prompt_rewrites
        on
            use_evidence.session_guid = prompt_rewrites.session_guid
            and use_evidence.first_use_evidence_at < prompt_rewrites.prompted_at

),

rewrites_after_evidence as (

    select retrieval_id
    from prompts_after_evidence
    where prompt_order = 1 and is_rewrite

),

final as (

    select
        use_evidence.retrieval_id,
        use_evidence.session_guid,
        rewrites_after_evidence.retrieval_id is not null as has_rewrite_after_evidence,
        use_evidence.has_user_asset_edit,
        rewrites_after_evidence.retrieval_id is not null
        or use_evidence.has_user_asset_edit as has_downstream_correction
    from use_evidence
    left join rewrites_after_evidence
        on use_evidence.retrieval_id = rewrites_after_evidence.retrieval_id

)

{{ lara_stamp_rows('final') }}
