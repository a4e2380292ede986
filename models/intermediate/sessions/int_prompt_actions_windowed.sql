{#- Each non-synthetic prompt with the user actions of its window: same
    session, acted_at >= the prompt's time and < the session's next prompt's
    time (open-ended for the session's last prompt). An action at exactly the
    next prompt's time belongs to the next prompt; the action's own prompt_id
    is not used (it is often missing), only time and session.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompt_sequences as (

    select * from {{ ref('int_prompt_sequences') }}
    where not is_synthetic and {{ lara_in_session_rows_this_run('session_guid') }}

),

user_actions as (

    select * from {{ ref('int_actions_scoped') }}
    where actor = 'user' and not is_synthetic and {{ lara_in_session_rows_this_run('session_guid') }}

),

windowed as (

    select
        prompt_sequences.prompt_id,
        user_actions.action_id,
        prompt_sequences.session_guid,
        prompt_sequences.surface,
        user_actions.action_type,
        prompt_sequences.prompted_at,
        prompt_sequences.next_prompted_at,
        user_actions.acted_at
    from prompt_sequences
    inner join user_actions
        on
            prompt_sequences.session_guid = user_actions.session_guid
            and prompt_sequences.prompted_at <= user_actions.acted_at
            and (
                prompt_sequences.next_prompted_at is null
                or prompt_sequences.next_prompted_at > user_actions.acted_at
            )

)

{{ lara_stamp_rows('windowed') }}
