{#- The rewrite-rate paradox (LARA paper: chat rewrites 44.4% vs template
    search 33.1%, though assistant users never see a ranked list) and its
    resolution. The naive rate mixes failed searches with edits of generated
    results; split, chat's rewrites are mostly downstream corrections and its
    search reformulation rate (over retrieval turns only) falls below
    template search's. One row per surface, whole period, every rate with
    its numerator, denominator and 95% Wilson interval; the gaps are this
    surface minus template_search. Run: dbt compile, then the compiled SQL
    in target/compiled/lara/analyses/. -#}
with

rewrites as (

    select * from {{ ref('agg_rewrites') }}
    where is_period_total

),

template_search as (

    select
        naive_rewrite_rate as template_naive_rewrite_rate,
        search_reformulation_rate as template_search_reformulation_rate
    from rewrites
    where surface = 'template_search'

),

compared as (

    select
        rewrites.surface,
        rewrites.prompt_count,
        rewrites.retrieval_turn_count,
        rewrites.naive_rewrite_rate_numerator,
        rewrites.naive_rewrite_rate,
        rewrites.naive_rewrite_rate_ci_low,
        rewrites.naive_rewrite_rate_ci_high,
        rewrites.naive_rewrite_rate - template_search.template_naive_rewrite_rate
            as naive_rewrite_rate_gap_vs_template_search,
        rewrites.search_reformulation_count,
        rewrites.search_reformulation_rate,
        rewrites.search_reformulation_rate_ci_low,
        rewrites.search_reformulation_rate_ci_high,
        rewrites.search_reformulation_rate - template_search.template_search_reformulation_rate
            as search_reformulation_rate_gap_vs_template_search,
        rewrites.downstream_correction_count,
        rewrites.downstream_correction_rate,
        rewrites.downstream_correction_rate_ci_low,
        rewrites.downstream_correction_rate_ci_high,
        {{ lara_rate('rewrites.downstream_correction_count', 'rewrites.rewritten_prompt_count') }}
            as downstream_correction_share_of_rewrites,
        {{ lara_wilson_low('rewrites.downstream_correction_count', 'rewrites.rewritten_prompt_count') }}
            as downstream_correction_share_of_rewrites_ci_low,
        {{ lara_wilson_high('rewrites.downstream_correction_count', 'rewrites.rewritten_prompt_count') }}
            as downstream_correction_share_of_rewrites_ci_high
    from rewrites
    left join template_search
        on true

)

select * from compared
order by surface
