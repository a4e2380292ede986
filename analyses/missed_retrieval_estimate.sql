{#- The rough missed-retrieval estimate of the LARA paper against the
    labelled measurement. The paper reads the chat trigger rate (10.7%) as
    the share of prompts users wanted a retrieval for, and its gap to the
    assistant-wide trigger rate (0.31%) as a first rough estimate of missed
    retrievals, warning that the two rates have different scopes. Tier 0
    labels measure it directly: the missed-retrieval share of labelled
    assistant prompts (intent and no retrieval / labelled prompts), the
    missed-retrieval rate (/ prompts with intent) and the intent rate the
    rough estimate assumes. One row, whole period, assistant surfaces;
    labelled numbers with their sample size and 95% Wilson intervals.
    Labelled rates are rates of the labelled sample: they estimate the
    population only when the sample was drawn at random. Samples are often
    stratified (the bundled generator draws half of its labels from prompts
    with intent or a retrieval, prompt_label_intent_share), and intent is
    not in the logs, so no log-based reweighting can correct that: read the
    labelled numbers with the labelling design in hand. -#}
with

routing as (

    select * from {{ ref('agg_tier0_routing') }}
    where is_period_total

),

chat as (

    select
        trigger_rate as chat_trigger_rate,
        trigger_rate_ci_low as chat_trigger_rate_ci_low,
        trigger_rate_ci_high as chat_trigger_rate_ci_high
    from routing
    where surface = 'chat'

),

assistant as (

    select
        trigger_rate as assistant_trigger_rate,
        trigger_rate_ci_low as assistant_trigger_rate_ci_low,
        trigger_rate_ci_high as assistant_trigger_rate_ci_high,
        labelled_prompt_count,
        retrieval_intent_rate,
        retrieval_intent_rate_ci_low,
        retrieval_intent_rate_ci_high,
        missed_retrieval_prompt_share_numerator,
        missed_retrieval_prompt_share,
        missed_retrieval_prompt_share_ci_low,
        missed_retrieval_prompt_share_ci_high,
        missed_retrieval_rate_numerator,
        missed_retrieval_rate_denominator,
        missed_retrieval_rate,
        missed_retrieval_rate_ci_low,
        missed_retrieval_rate_ci_high
    from routing
    where surface = 'assistant'

),

compared as (

    select
        chat.chat_trigger_rate,
        chat.chat_trigger_rate_ci_low,
        chat.chat_trigger_rate_ci_high,
        assistant.assistant_trigger_rate,
        assistant.assistant_trigger_rate_ci_low,
        assistant.assistant_trigger_rate_ci_high,
        chat.chat_trigger_rate - assistant.assistant_trigger_rate as rough_missed_retrieval_share_estimate,
        assistant.labelled_prompt_count,
        assistant.retrieval_intent_rate,
        assistant.retrieval_intent_rate_ci_low,
        assistant.retrieval_intent_rate_ci_high,
        assistant.missed_retrieval_prompt_share_numerator,
        assistant.missed_retrieval_prompt_share,
        assistant.missed_retrieval_prompt_share_ci_low,
        assistant.missed_retrieval_prompt_share_ci_high,
        chat.chat_trigger_rate - assistant.assistant_trigger_rate
        between assistant.missed_retrieval_prompt_share_ci_low
        and assistant.missed_retrieval_prompt_share_ci_high as is_rough_estimate_within_labelled_interval,
        assistant.missed_retrieval_rate_numerator,
        assistant.missed_retrieval_rate_denominator,
        assistant.missed_retrieval_rate,
        assistant.missed_retrieval_rate_ci_low,
        assistant.missed_retrieval_rate_ci_high
    from chat
    cross join assistant

)

select * from compared
