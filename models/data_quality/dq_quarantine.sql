{#- Every quarantined raw row of every contract table, with its reason and
    where it came from. Nothing the staging layer refuses is dropped: it is
    here, traceable to file and line. -#}
with

{% for table_name in lara_contract_table_names() %}
{{ table_name }} as (

    select
        '{{ table_name }}' as table_name,
        _quarantine_reason as quarantine_reason,
        _quarantine_column as quarantine_column,
        _record_key as record_key,
        _source_format as source_format,
        _source_file as source_file,
        _source_line as source_line,
        _partition_value as partition_value,
        _raw_row as raw_row
    from {{ ref('base_lara__' ~ table_name) }}
    where _row_status = 'quarantined'

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
