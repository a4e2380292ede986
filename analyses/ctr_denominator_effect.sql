{#- The CTR denominator effect (LARA paper: assistant CTR "near zero"
    because 99.7% of conversations never triggered a retrieval, while
    triggered retrievals behave normally, about 1.05 clicks per grid).
    Whole period, per assistant surface: naive conversation-level CTR
    beside the retrieval-level CTR over displayed retrievals, the share of
    assistant sessions that had any retrieval, and clicks per grid. -#}
with

ctr as (

    select * from {{ ref('agg_ctr') }}
    where is_period_total and surface in ('chat', 'editor_assistant', 'assistant', 'template_search')

),

compared as (

    select
        surface,
        naive_session_ctr_numerator,
        naive_session_ctr_denominator,
        naive_session_ctr,
        naive_session_ctr_ci_low,
        naive_session_ctr_ci_high,
        retrieval_session_share,
        retrieval_ctr_numerator,
        retrieval_ctr_denominator,
        retrieval_ctr,
        retrieval_ctr_ci_low,
        retrieval_ctr_ci_high,
        clicks_per_displayed_grid,
        clicks_per_displayed_grid_ci_low,
        clicks_per_displayed_grid_ci_high
    from ctr

)

select * from compared
order by surface
