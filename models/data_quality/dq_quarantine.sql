{#- Every quarantined raw row of every contract table, with its reason and
    where it came from. Nothing the staging layer refuses is dropped: it is
    here, traceable to file and line.

    Incremental on DuckDB (strategy lara_replace_raw_rows): a run deletes the
    rows whose base row was loaded or changed status after the last
    completed run (lara_run_limits.lower_limit), whatever that status is
    now, and inserts those that are quarantined. So a row that left
    quarantine (its file was rewritten without it: a `removed` tombstone;
    or the rival version that made it a conflicting duplicate left) leaves
    this table. A table on Spark (no DELETE on Parquet tables). -#}
{{ config(
    materialized=('table' if target.type == 'spark' else 'incremental'),
    incremental_strategy='lara_replace_raw_rows',
    on_schema_change='fail'
) }}

-- depends_on: {{ ref('lara_run_limits') }}

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
        _raw_row as raw_row,
        _lara_loaded_at
    from {{ ref('base_lara__' ~ table_name) }}
    where
        _row_status = 'quarantined'
    {%- if is_incremental() %}
        and _lara_loaded_at > (
            select coalesce(run_limits.lower_limit, cast('1900-01-01' as timestamp))
            from {{ ref('lara_run_limits') }} as run_limits
        )
    {%- endif %}

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
