{#- lara_reconciliation(table_name): one row that reconciles a contract
    table: raw rows = clean rows + quarantined rows + exact duplicates.
    The three parts are counted in three different models (the base model's
    statuses, the staging model, the quarantine model), so a row lost or
    double-counted by any of them breaks the equation. The files of the
    table are accounted for beside it: data files read, and files skipped
    (their rows are in no table; dq_raw_files says why). -#}
{% macro lara_reconciliation(table_name) %}
with

base as (

    select
        count(*) as raw_rows,
        cast(sum(case when _row_status = 'duplicate' then 1 else 0 end) as bigint) as duplicate_rows
    from {{ ref('base_lara__' ~ table_name) }}
    {#- Tombstones (a row its rewritten file no longer holds) are no raw row. #}
    where _row_status != 'removed'

),

staged as (

    select count(*) as clean_rows
    from {{ ref('stg_lara__' ~ table_name) }}

),

quarantined as (

    select count(*) as quarantined_rows
    from {{ ref('dq_quarantine') }}
    where table_name = '{{ table_name }}'

),

files as (

    select
        count(case when file_status = 'data' then 1 end) as data_file_count,
        count(case when file_status = 'skipped' then 1 end) as skipped_file_count
    from {{ ref('dq_raw_files') }}
    where table_name = '{{ table_name }}'

),

reconciled as (

    select
        '{{ table_name }}' as table_name,
        base.raw_rows,
        staged.clean_rows,
        quarantined.quarantined_rows,
        coalesce(base.duplicate_rows, 0) as duplicate_rows,
        base.raw_rows = staged.clean_rows
        + quarantined.quarantined_rows
        + coalesce(base.duplicate_rows, 0) as is_reconciled,
        files.data_file_count,
        files.skipped_file_count
    from base
    cross join staged
    cross join quarantined
    cross join files

)

select * from reconciled
{% endmacro %}
