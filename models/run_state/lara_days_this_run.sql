{#- The days whose daily aggregates this run recomputes: every UTC date on
    which a prompt, retrieval or action of a session this run recomputes is
    logged, in any status. That covers the days of the rows the run writes
    and of the rows it removes (a version quarantined today still holds the
    day it was counted on), and the day of every retrieval whose outcomes
    moved (its session is in lara_sessions_this_run through lineage). On a
    full build: every day. -#}
{{ config(materialized='table') }}

{%- set limits = ref('lara_run_limits') -%}
{%- set is_full_build = true -%}
{%- if execute and load_relation(limits) is not none -%}
    {%- set is_full_build = run_query('select is_full_build from ' ~ limits).columns[0].values()[0] -%}
{%- endif %}

-- depends_on: {{ ref('lara_sessions_this_run') }}

with

event_days as (

    {% for table_name in ['prompts', 'retrievals', 'actions'] -%}
    select cast(ts as date) as event_date
    from {{ ref('base_lara__' ~ table_name) }}
    {% if not is_full_build -%}
    where session_guid in (select session_guid from {{ ref('lara_sessions_this_run') }})
    {% endif -%}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

)

select distinct event_date
from event_days
where event_date is not null
