{#- The days whose daily aggregates this run recomputes: every UTC date on
    which a prompt, retrieval or action of a session this run recomputes is
    logged, in any status. That covers the days of the rows the run writes
    and of the rows it removes (a version quarantined today still holds the
    day it was counted on), and the day of every retrieval whose outcomes
    moved (its session is in lara_sessions_this_run through lineage). On a
    full build: every day.

    Each day carries the flags of its sessions (lara_sessions_this_run):
    `is_for_every_model` when one of them is, `has_loaded_<table>` when one
    of them was touched by that label table. A daily aggregate recomputes
    the days for every model and those flagged by a label table in its own
    lineage (lara_days_this_run_select). -#}
{{ config(materialized='table') }}

{%- set limits = ref('lara_run_limits') -%}
{%- set is_full_build = true -%}
{%- if execute and load_relation(limits) is not none -%}
    {%- set is_full_build = run_query('select is_full_build from ' ~ limits).columns[0].values()[0] -%}
{%- endif %}

-- depends_on: {{ ref('lara_sessions_this_run') }}

with

{% if not is_full_build -%}
sessions as (

    select
        session_guid,
        {% for table_name in lara_label_tables() -%}
        case when has_loaded_{{ table_name }} then 1 else 0 end as has_loaded_{{ table_name }},
        {% endfor -%}
        case when is_for_every_model then 1 else 0 end as is_for_every_model
    from {{ ref('lara_sessions_this_run') }}

),

{% endif -%}
event_days as (

    {% for table_name in ['prompts', 'retrievals', 'actions'] -%}
    {% if is_full_build -%}
    select
        cast(ts as date) as event_date,
        {% for label_table in lara_label_tables() -%}
        0 as has_loaded_{{ label_table }},
        {% endfor -%}
        1 as is_for_every_model
    from {{ ref('base_lara__' ~ table_name) }}
    {%- else -%}
    select
        cast(base_rows.ts as date) as event_date,
        {% for label_table in lara_label_tables() -%}
        sessions.has_loaded_{{ label_table }},
        {% endfor -%}
        sessions.is_for_every_model
    from {{ ref('base_lara__' ~ table_name) }} as base_rows
    inner join sessions
        on base_rows.session_guid = sessions.session_guid
    {%- endif %}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

)

select
    event_date,
    {% for table_name in lara_label_tables() -%}
    max(has_loaded_{{ table_name }}) = 1 as has_loaded_{{ table_name }},
    {% endfor -%}
    max(is_for_every_model) = 1 as is_for_every_model
from event_days
where event_date is not null
group by event_date
