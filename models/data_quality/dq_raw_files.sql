{#- Every file found under a contract table's folder of the raw root, with
    what the build did with it (lara_raw.raw_files, written by the raw-view
    registration at the start of this run): `data` (read), `skipped` with a
    reason (outside_partition_layout, unsupported_file_type, unreadable_file,
    invalid_file_schema) and the error, or `ignored` (hidden and
    `_`-prefixed marker files). Skipped files are read by nothing: their rows
    are in no table, the reconciliation counts them and the data-quality gate
    fails naming them. Rebuilt each run from the listing (one row per file). -#}
with

listed as (

    select * from {{ source('lara_raw_listing', 'raw_files') }}

),

final as (

    select
        table_name,
        relative_path,
        partition_value,
        file_format,
        size_bytes,
        modified_at,
        file_status,
        skip_reason,
        skip_detail
    from listed

)

select * from final
