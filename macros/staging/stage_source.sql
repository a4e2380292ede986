{#
    lara_stage_source(table_name): the body of a base model. Reads the raw
    view of one contract table, types every column and gives each raw row
    exactly one status:
        clean        valid, first delivery of its content
        duplicate    exact re-delivery of a clean row's content (removed)
        quarantined  invalid, or a conflicting version of a key
    with `quarantine_reason` / `quarantine_column` for quarantined rows.

    Checks, first match wins (the reason codes are an interface: the
    generator, the data-quality gate and the README use the same words):
        json_parse_error       the JSON line is not a JSON object
        invalid_partition      the dt= folder is not a date
        missing_required       a required column is absent or null
        empty_id               an id is empty or whitespace
        invalid_timestamp      a timestamp does not parse
        invalid_type           a boolean / integer / float does not parse
        invalid_enum           an enum value outside the contract (after trim + lower-case)
        out_of_range           a number outside the contract's min/max
        invalid_list           a list column is not a list, or holds a null or blank id
        conflicting_duplicate  the table key occurs with different contents:
                               every version is quarantined (no version can be
                               trusted over another)
    Exact duplicates are judged on the typed, normalised values, so the same
    row delivered once as Parquet and once as JSON is a duplicate too.

    Incremental runs (the base models are incremental, delete+insert on
    `_dedup_key`; on Spark lara_replace_partitions by `_partition_value`,
    rewriting each partition whole, see macros/spark/incremental.sql): only the raw files of *pending* partitions are read
    (`lara_raw_pending_select`: partitions holding a file the table has not
    seen, plus the last `lara_lookback_days` processed partitions). Rows
    already in the table whose key occurs in the batch are re-judged with
    it, so a conflicting version arriving days later quarantines the old
    version too, exactly as a full refresh would. `_dedup_key` is
    `key:<record key>` for rows that passed the checks (all versions of a
    key are replaced together) and `row:<file>:<line>` for rows that failed
    one. `_lara_loaded_at` is when the row's status or content last changed
    (a re-read, unchanged row keeps its old time): downstream incremental
    models recompute the sessions touched by rows loaded after their own
    watermark.
#}
{% macro lara_stage_source(table_name) %}
    {%- set spec = lara_contract()[table_name] -%}
    {%- set columns = spec.columns -%}
    {%- set key_columns = spec.key -%}
    {%- set checks = lara_validation_checks(columns) %}

with

source as (

    {% if is_incremental() -%}
    {{ lara_raw_pending_select(table_name) }}
    {%- else -%}
    select * from {{ source('lara_raw', table_name) }}
    {%- endif %}

),

typed as (

    select
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        _is_parseable,
        _raw_row,
        {{ lara_try_cast('_partition_value', 'date') }} as _partition_date,
        {%- for column in columns %}
        {{ column.name }} as _text_{{ column.name }},
        {{ lara_typed_column(column) }} as {{ column.name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from source

),

validated as (

    select
        *,
        case
            {%- for check in checks %}
            when {{ check.condition }} then '{{ check.reason }}:{{ check.column }}'
            {%- endfor %}
        end as _failed_check
    from typed

),

delivered as {% if is_incremental() %}{{ lara_materialized_cte() }} {% endif %}(

    select
        *,
        {{ lara_row_hash(columns | map(attribute='name') | list) }} as _row_hash,
        {%- if key_columns %}
        {{ lara_row_hash(key_columns) }} as _record_key
        {%- else %}
        {{ lara_row_hash(columns | map(attribute='name') | list) }} as _record_key
        {%- endif %}
    from validated

),

{% if is_incremental() -%}
{#- Rows already loaded from other partitions whose key is in this batch:
    re-judged together with the batch. -#}
delivered_earlier as (

    select
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        true as _is_parseable,
        _raw_row,
        _partition_date,
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        cast(null as {{ dbt.type_string() }}) as _failed_check,
        _row_hash,
        _record_key
    from {{ this }}
    where
        _dedup_key in (
            select 'key:' || _record_key from delivered where _failed_check is null
        )
        and _partition_value not in (select distinct _partition_value from delivered)

),

judged as (

    select
        _source_format, _source_file, _source_line, _partition_value, _is_parseable, _raw_row,
        _partition_date,
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        _failed_check, _row_hash, _record_key
    from delivered
    union all
    select * from delivered_earlier

),
{%- else -%}
judged as (

    select * from delivered

),
{%- endif %}

ranked as (

    select
        *,
        case
            when _failed_check is null
                then row_number() over (
                    partition by _failed_check is null, _row_hash
                    order by _partition_value, _source_file, _source_line
                )
        end as _delivery_rank
    from judged

),

versions as (

    select
        *,
        case
            when _failed_check is null and _delivery_rank = 1
                then min(_row_hash) over (partition by _failed_check is null, _delivery_rank = 1, _record_key)
                    <> max(_row_hash) over (partition by _failed_check is null, _delivery_rank = 1, _record_key)
        end as _is_conflicting
    from ranked

),

final as (

    select
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        _partition_date,
        case
            when _failed_check is not null or _is_conflicting then 'quarantined'
            when _delivery_rank > 1 then 'duplicate'
            else 'clean'
        end as _row_status,
        case
            when _failed_check is not null then {{ lara_split_part('_failed_check', ':', 1) }}
            when _is_conflicting then 'conflicting_duplicate'
        end as _quarantine_reason,
        case
            when _failed_check is not null then {{ lara_split_part('_failed_check', ':', 2) }}
            when _is_conflicting then '{{ key_columns | join(",") }}'
        end as _quarantine_column,
        _record_key,
        _row_hash,
        case
            when _failed_check is null then 'key:' || _record_key
            else 'row:' || _source_file || ':' || cast(_source_line as {{ dbt.type_string() }})
        end as _dedup_key,
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        _raw_row
    from versions

),

loaded as (

    select
        final.*,
        {% if is_incremental() -%}
        {#- An unchanged re-read row keeps the time it was first loaded. -#}
        coalesce(
            existing._lara_loaded_at, {{ lara_run_started_at() }}
        ) as _lara_loaded_at
    from final
    left join {{ this }} as existing
        on final._source_file = existing._source_file
        and final._source_line = existing._source_line
        and final._row_hash is not distinct from existing._row_hash
        and final._row_status = existing._row_status
        and final._quarantine_reason is not distinct from existing._quarantine_reason
        {%- else %}
        {{ lara_run_started_at() }} as _lara_loaded_at
    from final
        {%- endif %}

)

{%- if is_incremental() and lara_overwrites_partitions() %}
{#- Where a run replaces whole partitions (Spark): the other rows of each
    earlier partition whose keys were re-judged, unchanged. #}
{%- set output_columns = (columns | map(attribute='name') | list) + [
    '_partition_date', '_row_status', '_quarantine_reason', '_quarantine_column',
    '_record_key', '_row_hash', '_dedup_key', '_source_format', '_source_file',
    '_source_line', '_partition_value', '_raw_row', '_lara_loaded_at'] %}
,

carried as (

    select {{ output_columns | join(', ') }}
    from {{ this }}
    where
        _partition_value in (select _partition_value from delivered_earlier)
        and _dedup_key not in (select 'key:' || _record_key from delivered_earlier)

)

select {{ output_columns | join(', ') }} from loaded
union all
select * from carried
{%- else %}

select * from loaded
{%- endif %}
{% endmacro %}


{% macro lara_typed_column(column) %}
    {%- set lara_type = column.lara_type -%}
    {%- set text = column.name -%}
    {%- if lara_type in ('id', 'string') -%}
        {{ text }}
    {%- elif lara_type == 'enum' -%}
        lower(trim({{ text }}))
    {%- elif lara_type == 'timestamp' -%}
        {{ lara_parse_utc_timestamp(text) }}
    {%- elif lara_type == 'boolean' -%}
        {{ lara_try_cast('lower(trim(' ~ text ~ '))', 'boolean') }}
    {%- elif lara_type == 'integer' -%}
        {{ lara_try_cast(lara_try_cast(text, 'double'), 'bigint') }}
    {%- elif lara_type == 'float' -%}
        {{ lara_try_cast(text, 'double') }}
    {%- elif lara_type == 'string_list' -%}
        {{ lara_parse_string_list(text) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("lara: unknown lara_type '" ~ lara_type ~ "' on column " ~ column.name) }}
    {%- endif -%}
{% endmacro %}


{% macro lara_validation_checks(columns) %}
    {#- Ordered (reason, column, condition) triples over the `typed` CTE. -#}
    {%- set checks = [
        {'reason': 'json_parse_error', 'column': '', 'condition': 'not _is_parseable'},
        {'reason': 'invalid_partition', 'column': 'dt', 'condition': '_partition_date is null'},
    ] -%}
    {%- for column in columns if column.get('required') -%}
        {%- do checks.append({'reason': 'missing_required', 'column': column.name,
            'condition': '_text_' ~ column.name ~ ' is null'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'id' -%}
        {%- do checks.append({'reason': 'empty_id', 'column': column.name,
            'condition': "trim(_text_" ~ column.name ~ ") = ''"}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'timestamp' -%}
        {%- do checks.append({'reason': 'invalid_timestamp', 'column': column.name,
            'condition': '_text_' ~ column.name ~ ' is not null and ' ~ column.name ~ ' is null'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type in ('boolean', 'integer', 'float') -%}
        {%- do checks.append({'reason': 'invalid_type', 'column': column.name,
            'condition': '_text_' ~ column.name ~ ' is not null and ' ~ column.name ~ ' is null'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'enum' -%}
        {%- do checks.append({'reason': 'invalid_enum', 'column': column.name,
            'condition': column.name ~ ' not in (' ~ lara_sql_string_list(column['values'])[1:-1] ~ ')'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.get('min') is not none or column.get('max') is not none -%}
        {%- set bounds = [] -%}
        {%- if column.get('min') is not none -%}{%- do bounds.append(column.name ~ ' < ' ~ column['min']) -%}{%- endif -%}
        {%- if column.get('max') is not none -%}{%- do bounds.append(column.name ~ ' > ' ~ column['max']) -%}{%- endif -%}
        {%- do checks.append({'reason': 'out_of_range', 'column': column.name,
            'condition': '(' ~ (bounds | join(' or ')) ~ ')'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'string_list' -%}
        {%- do checks.append({'reason': 'invalid_list', 'column': column.name,
            'condition': '_text_' ~ column.name ~ ' is not null and (' ~ column.name ~ ' is null or '
                ~ lara_list_has_blank(column.name) ~ ')'}) -%}
    {%- endfor -%}
    {{ return(checks) }}
{% endmacro %}


{% macro lara_split_part(expression, delimiter, part) %}
    {{ return(adapter.dispatch('lara_split_part', 'lara')(expression, delimiter, part)) }}
{% endmacro %}

{% macro default__lara_split_part(expression, delimiter, part) -%}
    split_part({{ expression }}, '{{ delimiter }}', {{ part }})
{%- endmacro %}
