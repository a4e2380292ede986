{#- One row per (trajectory, step, document read) of the replay experiments:
    static utility (SRU and proxy SRU), counterfactual trajectory utility (CTU)
    and its three deltas, mid-rank percentiles and the bridge flags. Every
    definition and decision is in _bridge__models.yml. -#}
{%- set replay_tables = ['replay_documents'] -%}
{{ lara_whole_table_config(replay_tables) }}
{%- set tie_decimals = var('bridge_tie_decimals', 9) -%}

with

{{ lara_tables_this_run_cte(replay_tables) }}

{# Recomputed whole, on runs that loaded replay documents only (the
    percentiles are over the whole experiment). #}
replay_documents as (

    select * from {{ ref('stg_lara__replay_documents') }}
    where {{ lara_if_tables_loaded() }}

),

{# A failed replay (status other than ok) takes the worst outcome. #}
counterfactual_outcomes as (

    select
        trajectory_id,
        question_id,
        step_index,
        doc_id,
        is_relevant,
        counterfactual_status,
        counterfactual_status <> 'ok' as is_failed_replay,
        reader_score_with,
        reader_score_without,
        proxy_score,
        answer_f1_original,
        next_recall_original,
        turns_original,
        case
            when counterfactual_status <> 'ok' then 0
            else answer_f1_counterfactual
        end as answer_f1_counterfactual,
        case
            when counterfactual_status <> 'ok' then 0
            else next_recall_counterfactual
        end as next_recall_counterfactual,
        case
            when counterfactual_status <> 'ok' then {{ var('replay_turn_cap') }}
            else turns_counterfactual
        end as turns_counterfactual
    from replay_documents

),

deltas as (

    select
        *,
        round(reader_score_with - reader_score_without, {{ tie_decimals }}) as sru,
        round(proxy_score, {{ tie_decimals }}) as proxy_sru,
        round(answer_f1_original - answer_f1_counterfactual, {{ tie_decimals }}) as delta_answer,
        round(next_recall_original - next_recall_counterfactual, {{ tie_decimals }}) as delta_retrieval,
        turns_original - turns_counterfactual as delta_turns
    from counterfactual_outcomes

),

utilities as (

    select
        *,
        round(
            cast({{ var('ctu_alpha') }} as double) * delta_answer
            + cast({{ var('ctu_beta') }} as double) * delta_retrieval
            - cast({{ var('ctu_gamma') }} as double) * delta_turns,
            {{ tie_decimals }}
        ) as ctu
    from deltas

),

{# Reader variant: every document with a CTU. Proxy variant: the documents
    that also have a proxy score, for both axes. #}
percentiles as (

    select
        *,
        {{ lara_mid_rank_percentile('sru', 'ctu is not null') }} as sru_percentile,
        {{ lara_mid_rank_percentile('ctu', 'ctu is not null') }} as ctu_percentile,
        {{ lara_mid_rank_percentile('proxy_sru', 'ctu is not null and proxy_sru is not null') }}
            as proxy_sru_percentile,
        {{ lara_mid_rank_percentile('ctu', 'ctu is not null and proxy_sru is not null') }}
            as proxy_ctu_percentile
    from utilities

),

quadrants as (

    select
        *,
        case
            when sru_percentile is null then null
            when sru_percentile < {{ var('bridge_tau_low') }} and ctu_percentile > {{ var('bridge_tau_high') }}
                then 'low_sru_high_ctu'
            when sru_percentile < {{ var('bridge_tau_low') }} then 'low_sru_low_ctu'
            when ctu_percentile > {{ var('bridge_tau_high') }} then 'high_sru_high_ctu'
            else 'high_sru_low_ctu'
        end as bridge_quadrant,
        case
            when proxy_sru_percentile is null then null
            when
                proxy_sru_percentile < {{ var('bridge_tau_low') }}
                and proxy_ctu_percentile > {{ var('bridge_tau_high') }}
                then 'low_sru_high_ctu'
            when proxy_sru_percentile < {{ var('bridge_tau_low') }} then 'low_sru_low_ctu'
            when proxy_ctu_percentile > {{ var('bridge_tau_high') }} then 'high_sru_high_ctu'
            else 'high_sru_low_ctu'
        end as proxy_bridge_quadrant
    from percentiles

),

final as (

    select
        -- ids
        trajectory_id,
        question_id,
        step_index,
        doc_id,
        -- strings
        counterfactual_status,
        bridge_quadrant,
        proxy_bridge_quadrant,
        -- numerics
        sru,
        proxy_sru,
        delta_answer,
        delta_retrieval,
        delta_turns,
        ctu,
        sru_percentile,
        ctu_percentile,
        proxy_sru_percentile,
        proxy_ctu_percentile,
        -- booleans
        is_relevant,
        is_failed_replay,
        bridge_quadrant = 'low_sru_high_ctu' as is_bridge,
        proxy_bridge_quadrant = 'low_sru_high_ctu' as is_proxy_bridge,
        -- bookkeeping
        {{ lara_run_started_at() }} as _lara_loaded_at
    from quadrants

)

select * from final
