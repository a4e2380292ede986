{#- One row per non-synthetic session (prompt sessions and action-only
    sessions), with the naive and the lineage-corrected abandonment flags. 

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the rows of lara_sessions_this_run only. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

sessions as (

    select * from {{ ref('int_sessions_summarised') }}
    where not is_synthetic and {{ lara_in_session_rows_this_run('session_guid') }}

),

flagged as (

    select
        session_guid,
        session_date,
        session_started_at,
        session_surface,
        assistant_prompt_count > 0 as is_assistant_session,
        prompt_count = 0 as is_action_only_session,
        prompt_count,
        assistant_prompt_count,
        chat_prompt_count,
        editor_assistant_prompt_count,
        template_search_prompt_count,
        retrieval_turn_count,
        retrieval_count,
        user_action_count,
        user_click_count,
        user_click_count > 0 as has_user_click,
        in_session_outcome_count,
        in_session_outcome_credited_elsewhere_count,
        outside_session_outcome_count,
        case
            when prompt_count > 0 then in_session_outcome_count = 0
        end as is_abandoned_naive,
        case
            when prompt_count > 0
                then in_session_outcome_count = 0 and outside_session_outcome_count = 0
        end as is_abandoned_lineage_corrected,
        case
            when prompt_count > 0
                then in_session_outcome_count = 0 and outside_session_outcome_count > 0
        end as is_abandonment_overstated
    from sessions

)

{{ lara_stamp_rows('flagged') }}
