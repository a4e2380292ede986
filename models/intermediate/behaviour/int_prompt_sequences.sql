{#- Each prompt with its neighbours in the session and the rewrite rule of
    metrics.md (Sessions and behaviour): a prompt is rewritten when the next
    prompt of its session has prompt_kind = 'rewrite'; where that next
    prompt's kind is null, when it comes within var rewrite_window_s (inclusive)
    with token Jaccard >= var rewrite_similarity_min on the prompt texts.
    Prompts are ordered by time, then id. Synthetic scope is per prompt
    (metrics.md v2): in-scope prompts are sequenced among themselves, so a
    synthetic probe between two real prompts is nobody's "next prompt".

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompts as (

    select * from {{ ref('int_prompts_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

tokenised as (

    select
        prompt_id,
        session_guid,
        surface,
        prompt_kind,
        prompted_at,
        is_synthetic,
        is_retrieval_turn,
        {{ lara_tokens('prompt_text') }} as prompt_tokens
    from prompts

),

sequenced as (

    select
        prompt_id,
        session_guid,
        surface,
        prompt_kind,
        prompted_at,
        is_synthetic,
        is_retrieval_turn,
        cast(row_number() over (
            partition by session_guid, is_synthetic order by prompted_at, prompt_id
        ) as bigint) as prompt_sequence,
        lead(prompt_id) over (
            partition by session_guid, is_synthetic order by prompted_at, prompt_id
        ) as next_prompt_id,
        prompt_tokens,
        lead(prompt_kind) over (
            partition by session_guid, is_synthetic order by prompted_at, prompt_id
        ) as next_prompt_kind,
        lead(prompt_tokens) over (
            partition by session_guid, is_synthetic order by prompted_at, prompt_id
        ) as next_prompt_tokens,
        lead(prompted_at) over (
            partition by session_guid, is_synthetic order by prompted_at, prompt_id
        ) as next_prompted_at
    from tokenised

),

compared as (

    select
        *,
        {#- Tokenised once per prompt; compared only where the next prompt's
            kind is not logged (the similarity rule applies only there). -#}
        case
            when next_prompt_kind is null
                then {{ lara_token_set_jaccard('prompt_tokens', 'next_prompt_tokens') }}
        end as next_prompt_similarity,
        {{ lara_seconds_between('prompted_at', 'next_prompted_at') }} as seconds_to_next_prompt
    from sequenced

),

final as (

    select
        prompt_id,
        session_guid,
        surface,
        prompt_kind,
        prompted_at,
        is_synthetic,
        is_retrieval_turn,
        prompt_sequence,
        next_prompt_id,
        next_prompt_kind,
        next_prompted_at,
        next_prompt_similarity,
        seconds_to_next_prompt,
        case
            when next_prompt_id is null then 'none'
            when next_prompt_kind is not null then 'prompt_kind'
            else 'similarity'
        end as rewrite_detection_method,
        case
            when next_prompt_id is null then false
            when next_prompt_kind is not null then next_prompt_kind = 'rewrite'
            else coalesce(
                seconds_to_next_prompt <= {{ var('rewrite_window_s') }}
                and next_prompt_similarity >= {{ var('rewrite_similarity_min') }},
                false
            )
        end as is_rewritten
    from compared

)

{{ lara_stamp_rows('final') }}
