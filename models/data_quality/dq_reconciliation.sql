{#- One row per contract table: raw = clean + quarantined + duplicates. -#}
with

{% for table_name in lara_contract_table_names() %}
{{ table_name }} as (

    select * from {{ ref('dq_reconciliation__' ~ table_name) }}

),

{% endfor %}
unioned as (

    {% for table_name in lara_contract_table_names() -%}
    select * from {{ table_name }}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

)

select * from unioned
