{#- One row per prompt: whether the prompt is a rewrite, the reading of
    ../shared/spec/metrics.md that the Tier 2 re-search rule ("a later
    retrieval ... whose prompt is a `rewrite` of a later turn (another
    prompt than this retrieval's)") and the downstream correction rule
    ("the session's first prompt after that evidence is a rewrite") share.

    A prompt is a rewrite when its prompt_kind is 'rewrite' or when the
    rewrite rule of int_prompt_sequences ("Sessions and behaviour": "a prompt
    is rewritten when the next prompt of its session has prompt_kind =
    'rewrite' (where prompt_kind is null: the next prompt within var
    rewrite_window_s, default 300, with token Jaccard >= var
    rewrite_similarity_min)") marks its predecessor as rewritten. So a
    first prompt whose kind is 'rewrite' is a rewrite too, and a prompt
    whose kind is null is one when it is similar and close enough to its
    predecessor; the behaviour marts use the same rule.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the prompts of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompt_sequences as (

    select
        prompt_id,
        session_guid,
        prompt_kind,
        prompted_at,
        is_synthetic,
        next_prompt_id,
        is_rewritten
    from {{ ref('int_prompt_sequences') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

rewrite_prompts as (

    select next_prompt_id as prompt_id
    from prompt_sequences
    where is_rewritten
    union
    select prompt_id
    from prompt_sequences
    where prompt_kind = 'rewrite'

),

final as (

    select
        prompt_sequences.prompt_id,
        prompt_sequences.session_guid,
        prompt_sequences.prompted_at,
        prompt_sequences.is_synthetic,
        rewrite_prompts.prompt_id is not null as is_rewrite
    from prompt_sequences
    left join rewrite_prompts
        on prompt_sequences.prompt_id = rewrite_prompts.prompt_id

)

{{ lara_stamp_rows('final') }}
