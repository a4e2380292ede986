{#- CTR (metrics.md Tier 1, secondary, direction only) on assistant surfaces
    beside the naive conversation-level CTR, to show the denominator effect:
    per day x surface with every roll-up ('all'). Sessions are dated and
    placed by their first assistant prompt; retrievals by their own day and
    surface. Synthetic traffic is excluded and counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface']] -%}
{{ lara_daily_config('activity_date') }}


with

{{ lara_days_this_run_cte() }}

{# A session's row is dated by its first assistant prompt, which takes all its
   prompts: an incremental run reads the sessions with an assistant prompt on
   a day it recomputes (their first prompt may be earlier: the roll-up keeps
   the recomputed days only), and their clicks. #}
prompts as (

    select
        prompt_id,
        session_guid,
        surface,
        prompted_at,
        prompt_date,
        is_retrieval_turn,
        is_synthetic
    from {{ ref('int_prompts_scoped') }}
    {%- if is_incremental() %}
    where
        is_assistant_surface
        and session_guid in (
            select session_guid from {{ ref('int_prompts_scoped') }}
            where is_assistant_surface and {{ lara_in_days_this_run('prompt_date') }}
        )
    {%- else %}
    where is_assistant_surface
    {%- endif %}

),

actions as (

    select
        session_guid,
        actor,
        action_type,
        is_synthetic
    from {{ ref('int_actions_scoped') }}
    {%- if is_incremental() %}
    where session_guid in (select session_guid from prompts)
    {%- endif %}

),

retrieval_facts as (

    select
        retrieval_date,
        surface,
        is_displayed,
        click_count,
        is_in_tier_scope
    from {{ ref('fct_retrievals') }}
    where is_assistant_surface and {{ lara_in_days_this_run('retrieval_date') }}

),

ranked_prompts as (

    select
        session_guid,
        surface,
        prompt_date,
        is_synthetic,
        row_number() over (partition by session_guid order by prompted_at, prompt_id) as prompt_sequence,
        max(case when is_retrieval_turn then 1 else 0 end) over (partition by session_guid) = 1
            as has_retrieval_turn
    from prompts

),

clicked_sessions as (

    select distinct session_guid
    from actions
    where actor = 'user' and action_type = 'click' and not is_synthetic

),

assistant_sessions as (

    select
        ranked_prompts.prompt_date as activity_date,
        ranked_prompts.surface,
        'session' as unit,
        ranked_prompts.is_synthetic,
        ranked_prompts.has_retrieval_turn,
        clicked_sessions.session_guid is not null as has_click,
        false as is_displayed_retrieval,
        0 as click_count
    from ranked_prompts
    left join clicked_sessions
        on ranked_prompts.session_guid = clicked_sessions.session_guid
    where ranked_prompts.prompt_sequence = 1

),

displayed_retrievals as (

    select
        retrieval_date as activity_date,
        surface,
        'retrieval' as unit,
        false as is_synthetic,
        true as has_retrieval_turn,
        click_count > 0 as has_click,
        true as is_displayed_retrieval,
        click_count
    from retrieval_facts
    where is_in_tier_scope and is_displayed

),

units as (

    select * from assistant_sessions
    union all
    select * from displayed_retrievals

),

{{ lara_rollup(
    'aggregated',
    rows='units',
    day='activity_date',
    dimensions=dimensions,
    measures=[
        ['synthetic_session_count', lara_count_if("unit = 'session' and is_synthetic")],
        ['assistant_session_count', lara_count_if("unit = 'session' and not is_synthetic")],
        ['clicked_session_count', lara_count_if("unit = 'session' and not is_synthetic and has_click")],
        ['retrieval_session_count', lara_count_if("unit = 'session' and not is_synthetic and has_retrieval_turn")],
        ['displayed_retrieval_count', lara_count_if("unit = 'retrieval'")],
        ['clicked_retrieval_count', lara_count_if("unit = 'retrieval' and has_click")],
        ['displayed_click_count', "cast(coalesce(sum(case when unit = 'retrieval' then click_count end), 0) as bigint)"],
    ],
) }}

final as (

    select
        grouping_level,
        activity_date,
        surface,
        synthetic_session_count,
        assistant_session_count,
        clicked_session_count,
        {{ lara_rate_columns('naive_conversation_ctr', 'clicked_session_count', 'assistant_session_count') }},
        retrieval_session_count,
        {{ lara_rate_columns('retrieval_session_share', 'retrieval_session_count', 'assistant_session_count') }},
        displayed_retrieval_count,
        clicked_retrieval_count,
        {{ lara_rate_columns('click_through_rate', 'clicked_retrieval_count', 'displayed_retrieval_count') }},
        displayed_click_count,
        {{ lara_rate('displayed_click_count', 'displayed_retrieval_count') }} as clicks_per_displayed_grid,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
