{#- The load log: one row per raw data file a completed run loaded into its
    base model, with its size and modification time (a file that changes is
    read again) and the rows read from it. Append-only: a file re-read by a later
    run (a late file in its partition, the lookback days) gets a new row; the
    newest row per file is its current state.

    It is the last node of the DAG (it depends on every incremental model),
    so a run that fails anywhere records nothing and the next run reads the
    same partitions and recomputes the same sessions again.
    `reflected_through` is the newest base load (lara_run_limits.upper_limit)
    that the session-grained models and daily aggregates have reflected: the
    next run's lower limit. A run that did not select every incremental
    model (a partial `--select`) records its loads but keeps the previous
    watermark, so the models it skipped catch up on the next full run. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    lara_loaded_at_column='run_started_at',
    on_schema_change='fail'
) }}

{#- The incremental models no other incremental model reads: with them,
    every incremental model is upstream of the log, so that a model that
    fails (or whose data test fails in `dbt build`) skips the log and the
    next run recomputes what this one could not. Add a new leaf here
    (python/tests/test_run_state_dag.py fails until it is). -#}
{%- for leaf in [
    'agg_abandonment', 'agg_attribution_agreement', 'agg_bridge_quadrants', 'agg_consumed_rank_distribution',
    'agg_ctr', 'agg_ctr_denominator_effect', 'agg_effective_action_rate', 'agg_lineage_faults',
    'agg_production_bridge', 'agg_prompts_per_session', 'agg_reretrieval', 'agg_rewrites',
    'agg_scope_exclusions', 'agg_stage_costs', 'agg_tier0_missed_retrieval', 'agg_tier0_routing',
    'agg_tier1_quality', 'agg_tier1_weighted', 'agg_tier2_usage', 'agg_tier3_completion',
    'agg_tier_diagnosis', 'agg_unattributed_outcomes', 'dq_quarantine', 'fct_action_attributions',
    'fct_entity_observations'
] %}
-- depends_on: {{ ref(leaf) }}
{%- endfor %}

{%- set limits = ref('lara_run_limits') -%}
{#- On a first build that did not select every incremental model, the log
    holds no watermark: the next run is a full build of the session layer. -#}
{%- set advance = lara_selects_every_incremental_model() %}

with

listed as (

    select * from {{ source('lara_raw_listing', 'raw_files') }}

),

{% for table_name in lara_contract_table_names() -%}
{%- set pending = lara_pending_partitions(table_name) if is_incremental() else none -%}
{%- set loaded = (not is_incremental()) or ('model.lara.base_lara__' ~ table_name) in selected_resources -%}
{{ table_name }}_files as (

    select
        listed.table_name,
        listed.partition_value,
        listed.source_file,
        listed.file_format,
        listed.size_bytes,
        listed.modified_at,
        count(loaded_rows._source_file) as raw_rows
    from listed
    left join {{ ref('base_lara__' ~ table_name) }} as loaded_rows
        on
            listed.source_file = loaded_rows._source_file
            and loaded_rows._row_status != 'removed'
    where
        listed.table_name = {{ lara_sql_string(table_name) }}
        and listed.file_status = 'data'
    {%- if not loaded %}
        and false
    {%- elif pending is not none %}
        and listed.partition_value in {{ lara_sql_in_list(pending) }}
    {%- endif %}
    group by
        listed.table_name,
        listed.partition_value,
        listed.source_file,
        listed.file_format,
        listed.size_bytes,
        listed.modified_at

),

{% endfor -%}
files as (

    {% for table_name in lara_contract_table_names() -%}
    select * from {{ table_name }}_files
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

),

final as (

    select
        {{ lara_run_started_at() }} as run_started_at,
        files.table_name,
        files.partition_value,
        files.source_file,
        files.file_format,
        files.size_bytes as file_size_bytes,
        files.modified_at as file_modified_at,
        files.raw_rows,
        {% if advance -%}
        (select run_limits.upper_limit from {{ limits }} as run_limits)
        {%- elif is_incremental() -%}
        (select max(manifest.reflected_through) from {{ this }} as manifest)
        {%- else -%}
        cast(null as timestamp)
        {%- endif %} as reflected_through
    from files

)

select * from final
