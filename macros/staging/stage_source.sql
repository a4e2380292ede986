{#
    lara_stage_source(table_name): the body of a base model. Reads the raw
    view of one contract table (typed already, macros/raw), normalises enums
    and gives each raw row exactly one status:
        clean        valid, first delivery of its content
        duplicate    exact re-delivery of a clean row's content (removed)
        quarantined  invalid, or a conflicting version of a key
    with `quarantine_reason` / `quarantine_column` for quarantined rows.

    Checks, first match wins (the reason codes are an interface: the
    generator, the data-quality gate and the README use the same words):
        json_parse_error             the JSON line is not a JSON object
        invalid_partition            the dt= folder is not a date
        missing_required             a required column is absent or null, or a
                                     column required on this row (contract
                                     `required_when`, e.g. a counterfactual
                                     outcome of an `ok` replay) is absent or null
        empty_id                     an id is empty or whitespace
        invalid_timestamp            a timestamp does not parse
        invalid_type                 a boolean / integer / float does not parse
                                     (an integer must be a whole number: 2.5 is
                                     invalid, not 2)
        invalid_enum                 an enum value outside the contract (after
                                     trim + lower-case)
        out_of_range                 a number outside the contract's min/max
        invalid_list                 a list column is not a list, or holds a null
                                     or blank id
        timestamp_outside_partition  an event's `ts` falls outside its `dt=` day
                                     by more than var partition_ts_tolerance_days
                                     (metrics.md scope rules): it must not move a
                                     session or an aggregate to another day
        conflicting_duplicate        the table key occurs with different
                                     contents: every version is quarantined (no
                                     version can be trusted over another)
    Exact duplicates are judged on the typed, normalised values, so the same
    row delivered once as Parquet and once as JSON is a duplicate too.

    `_raw_row` (the row as delivered, in dq_quarantine) is kept for the rows
    a check quarantines only: the JSON line, or for Parquet rows the row's
    values as JSON. A conflicting version (which passed every check) is
    shown as its typed values as JSON, whichever run found the conflict.

    Incremental runs (strategy lara_replace_partitions on both engines,
    macros/incremental/partitions.sql): only the raw files of *pending*
    partitions are read (macros/raw/pending.sql), and their rows replace
    every row of those partitions. Rows already in the table whose key
    occurs in the batch are re-judged with it, so a conflicting version
    arriving days later quarantines the old version too, exactly as a full
    refresh would. `_dedup_key` is `key:<record key>` for rows that passed
    the checks (all versions of a key are replaced together) and
    `row:<file>:<line>` for rows that failed one. `_lara_loaded_at` is when
    the row's status or content last changed (a re-read, unchanged row keeps
    its old time): lara_sessions_this_run recomputes the sessions of rows
    loaded after the last completed run.

    A row of a partition the run replaces that the new delivery no longer
    holds (its file rewritten without it, or with another content on its
    line) stays one run as status `removed`, loaded now: so
    lara_sessions_this_run recomputes its session (the row is gone from
    every model after it, as a full refresh would have it), and the other
    versions of its key are judged again (a conflicting version whose rival
    left is clean again). Tombstones of a run that did not complete are
    carried until a run completes; the strategy drops the others
    (lara_replace_partitions). Only the run state reads them: staging,
    quarantine and reconciliation count the other statuses.
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
        {%- if column.lara_type == 'enum' %}
        {{ column.name }} as _delivered_{{ column.name }},
        lower(trim({{ column.name }})) as {{ column.name }},
        {%- else %}
        {{ column.name }},
        {%- endif %}
        coalesce(_invalid_{{ column.name }}, false) as _invalid_{{ column.name }}{{ ',' if not loop.last }}
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

delivered as {{ lara_materialized_cte() }} (

    select
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        _partition_date,
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        _failed_check,
        case
            when _failed_check is not null
                then {{ lara_delivered_row_json(columns) }}
        end as _raw_row,
        {{ lara_row_hash(columns | map(attribute='name') | list) }} as _row_hash,
        {%- if key_columns %}
        {{ lara_row_hash(key_columns) }} as _record_key
        {%- else %}
        {{ lara_row_hash(columns | map(attribute='name') | list) }} as _record_key
        {%- endif %}
    from validated

),

{% if is_incremental() -%}
{%- set pending = lara_pending_partitions(table_name) -%}
{%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
{#- Rows already loaded from the partitions this run replaces that the
    delivery no longer holds (matched on file, line and content), and
    tombstones of earlier runs no completed run has reflected yet.
    Every probe of the model's own history selects a few narrow columns
    first and reads whole rows only where it matched (usually nowhere): a
    wide scan of every earlier row would make each run cost the history
    rather than the day. -#}
removed_candidates as (

    select
        existing._partition_value,
        existing._source_file,
        existing._source_line,
        existing._row_hash,
        existing._row_status,
        existing._dedup_key
    from {{ this }} as existing
    where
        {% if pending is none -%}
        true
        {%- else -%}
        existing._partition_value in {{ lara_sql_in_list(pending) }}
        {%- endif %}
        and (
            {%- if manifest is not none %}
            (
                existing._row_status = 'removed'
                and existing._lara_loaded_at > (select max(reflected_through) from {{ manifest }})
            )
            or
            {%- endif %}
            (
                existing._row_status != 'removed'
                and not exists (
                    select 1
                    from delivered
                    where {{ lara_same_row_content('delivered', 'existing') }}
                )
            )
        )

),

removed_rows as (

    select existing.*
    from {{ this }} as existing
    where
        existing._partition_value in (select removed_candidates._partition_value from removed_candidates)
        and exists (
            select 1
            from removed_candidates
            where
                {{ lara_same_row_content('removed_candidates', 'existing') }}
                and removed_candidates._row_status = existing._row_status
        )

),

{#- Rows already loaded from other partitions whose key is in this batch, or
    was the key of a removed row: re-judged together with the batch. The
    partitions that hold such rows first (a narrow probe), then the rows. -#}
{%- set earlier_conditions %}
        (
            _dedup_key in (
                select 'key:' || _record_key from delivered where _failed_check is null
            )
            or _dedup_key in (
                select removed_candidates._dedup_key
                from removed_candidates
                where removed_candidates._row_status != 'removed'
            )
        )
        and _row_status != 'removed'
        and _partition_value not in (select distinct _partition_value from delivered)
        {%- if pending %}
        and _partition_value not in {{ lara_sql_in_list(pending) }}
        {%- endif %}
{%- endset %}
earlier_partitions as (

    select distinct _partition_value
    from {{ this }}
    where
        {{- earlier_conditions }}

),

delivered_earlier as (

    select
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        _partition_date,
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        cast(null as {{ dbt.type_string() }}) as _failed_check,
        _raw_row,
        _row_hash,
        _record_key
    from {{ this }}
    where
        _partition_value in (select earlier_partitions._partition_value from earlier_partitions)
        and {{- earlier_conditions }}

),

judged as (

    select * from delivered
    union all
    select * from delivered_earlier

),
{%- else -%}
judged as (

    select * from delivered

),
{%- endif %}

{#- Duplicates and conflicting versions, among rows that passed the checks. -#}
{% if target.type == 'spark' -%}
{#- Spark: windows over the one pipeline. The aggregate-and-join form below
    reads the typed raw rows three times (aggregate, join, union), and
    Spark's optimizer, inferring constraints through the wide typed
    projections of every copy, runs out of driver memory planning it. -#}
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

{% else -%}
{#- DuckDB: almost every key is delivered once: the aggregate below finds the keys
    delivered more than once (and whether their contents differ), and only
    those rows are ranked by delivery, so the cost is one hash aggregate
    rather than a sort of every row. -#}
key_versions as (

    select
        _record_key,
        count(*) as _key_deliveries,
        min(_row_hash) <> max(_row_hash) as _has_versions
    from judged
    where _failed_check is null
    group by _record_key

),

{#- Read twice (the rows of keys delivered once, and of the others):
    inlined, not held in memory with every column (lara_inline_cte; 5M
    events: base_lara__retrievals' full build 6.0 s against 8.6 s). -#}
judged_keys as {{ lara_inline_cte() }} (

    select
        judged.*,
        key_versions._key_deliveries,
        key_versions._has_versions
    from judged
    left join key_versions
        on
            judged._failed_check is null
            and judged._record_key = key_versions._record_key

),

{#- Each content's deliveries in order: the first is kept, later ones are
    exact duplicates. -#}
redelivered as (

    select
        *,
        row_number() over (
            partition by _record_key, _row_hash
            order by _partition_value, _source_file, _source_line
        ) as _delivery_rank
    from judged_keys
    where _key_deliveries > 1

),

ranked as (

    select
        *,
        case when _failed_check is null then cast(1 as bigint) end as _delivery_rank
    from judged_keys
    where coalesce(_key_deliveries, 0) <= 1
    union all
    select * from redelivered

),

{#- A key delivered with different contents: the first delivery of each
    content is a conflicting version (quarantined); later deliveries of a
    content stay exact duplicates. -#}
versions as (

    select
        *,
        case
            when _failed_check is null and _delivery_rank = 1 then coalesce(_has_versions, false)
        end as _is_conflicting
    from ranked

),

{% endif -%}

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
        case
            when _failed_check is not null then _raw_row
            when _is_conflicting then {{ lara_row_json(columns) }}
        end as _raw_row
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
    left join (
        select
            _source_file,
            _source_line,
            _row_hash,
            _row_status,
            _quarantine_reason,
            _lara_loaded_at
        from {{ this }}
        where _partition_value in (select distinct _partition_value from judged)
    ) as existing
        on {{ lara_same_row_content('final', 'existing') }}
        and final._row_status = existing._row_status
        and final._quarantine_reason is not distinct from existing._quarantine_reason
        {%- else %}
        {{ lara_run_started_at() }} as _lara_loaded_at
    from final
        {%- endif %}

)

{%- if is_incremental() %}
{%- set output_columns = (columns | map(attribute='name') | list) + [
    '_partition_date', '_row_status', '_quarantine_reason', '_quarantine_column',
    '_record_key', '_row_hash', '_dedup_key', '_source_format', '_source_file',
    '_source_line', '_partition_value', '_raw_row', '_lara_loaded_at'] %}
,

{#- The removed rows as tombstones (status `removed`, loaded now; carried
    ones keep their time), columns in the order of `loaded`. -#}
tombstones as (

    select
        {%- for column in columns %}
        {{ column.name }},
        {%- endfor %}
        _partition_date,
        'removed' as _row_status,
        cast(null as {{ dbt.type_string() }}) as _quarantine_reason,
        cast(null as {{ dbt.type_string() }}) as _quarantine_column,
        _record_key,
        _row_hash,
        case
            when _row_status = 'removed' then _dedup_key
            else 'removed:' || _source_file || ':' || cast(_source_line as {{ dbt.type_string() }})
                || ':' || coalesce(_row_hash, '')
        end as _dedup_key,
        _source_format,
        _source_file,
        _source_line,
        _partition_value,
        cast(null as {{ dbt.type_string() }}) as _raw_row,
        case
            when _row_status = 'removed' then _lara_loaded_at
            else {{ lara_run_started_at() }}
        end as _lara_loaded_at
    from removed_rows

){%- endif %}

{%- if is_incremental() and lara_overwrites_partitions() %}
{#- Where a run replaces whole partitions (Spark): the other rows of each
    earlier partition whose keys were re-judged, unchanged. #}
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
union all
select * from tombstones
{%- elif is_incremental() %}

select * from loaded
union all
select * from tombstones
{%- else %}

select * from loaded
{%- endif %}
{% endmacro %}


{% macro lara_same_row_content(left, right) -%}
    {#- A join condition: the same raw row (file and line) with the same
        content (row hash, null-safe) in relations `left` and `right`. -#}
    {{ left }}._source_file = {{ right }}._source_file
    and {{ left }}._source_line = {{ right }}._source_line
    and {{ left }}._row_hash is not distinct from {{ right }}._row_hash
{%- endmacro %}


{% macro lara_delivered_row_json(columns) %}
    {#- The row as delivered, for a row a check quarantines: the JSON line,
        or for a Parquet row its values (enums as delivered) as JSON. -#}
    {%- set fields = [] -%}
    {%- for column in columns -%}
        {%- do fields.append([column.name, ('_delivered_' ~ column.name) if column.lara_type == 'enum' else column.name]) -%}
    {%- endfor -%}
    {{ return('coalesce(_raw_row, ' ~ lara_json_object(fields) ~ ')') }}
{% endmacro %}


{% macro lara_row_json(columns) %}
    {#- A row's typed values as a JSON object (a conflicting version). -#}
    {%- set fields = [] -%}
    {%- for column in columns -%}{%- do fields.append([column.name, column.name]) -%}{%- endfor -%}
    {{ return(lara_json_object(fields)) }}
{% endmacro %}


{% macro lara_json_object(fields) %}
    {{ return(adapter.dispatch('lara_json_object', 'lara')(fields)) }}
{% endmacro %}

{% macro duckdb__lara_json_object(fields) %}
    {%- set items = [] -%}
    {%- for name, expression in fields -%}{%- do items.append(name ~ ' := ' ~ expression) -%}{%- endfor -%}
    {{ return('cast(to_json(struct_pack(' ~ (items | join(', ')) ~ ')) as varchar)') }}
{% endmacro %}

{% macro spark__lara_json_object(fields) %}
    {%- set items = [] -%}
    {%- for name, expression in fields -%}{%- do items.append("'" ~ name ~ "', " ~ expression) -%}{%- endfor -%}
    {{ return("to_json(named_struct(" ~ (items | join(', ')) ~ "), map('ignoreNullFields', 'false'))") }}
{% endmacro %}


{% macro lara_validation_checks(columns) %}
    {#- Ordered (reason, column, condition) triples over the `typed` CTE. -#}
    {%- set checks = [
        {'reason': 'json_parse_error', 'column': '', 'condition': 'not _is_parseable'},
        {'reason': 'invalid_partition', 'column': 'dt', 'condition': '_partition_date is null'},
    ] -%}
    {%- for column in columns if column.get('required') -%}
        {%- do checks.append({'reason': 'missing_required', 'column': column.name,
            'condition': column.name ~ ' is null and not _invalid_' ~ column.name}) -%}
    {%- endfor -%}
    {#- Conditionally required (contract `required_when`: {other column: values}):
        e.g. the counterfactual outcomes of an `ok` replay, whose CTU would
        otherwise be null and silently leave the percentiles (metrics.md v2). -#}
    {%- for column in columns if column.get('required_when') -%}
        {%- set when = [] -%}
        {%- for other, values in column['required_when'].items() -%}
            {%- do when.append(other ~ ' in ' ~ lara_sql_in_list(values)) -%}
        {%- endfor -%}
        {%- do checks.append({'reason': 'missing_required', 'column': column.name,
            'condition': column.name ~ ' is null and not _invalid_' ~ column.name ~ ' and ' ~ (when | join(' and '))}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'id' -%}
        {%- do checks.append({'reason': 'empty_id', 'column': column.name,
            'condition': "trim(" ~ column.name ~ ") = ''"}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'timestamp' -%}
        {%- do checks.append({'reason': 'invalid_timestamp', 'column': column.name,
            'condition': '_invalid_' ~ column.name}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type in ('boolean', 'integer', 'float') -%}
        {%- do checks.append({'reason': 'invalid_type', 'column': column.name,
            'condition': '_invalid_' ~ column.name}) -%}
    {%- endfor -%}
    {%- for column in columns if column.lara_type == 'enum' -%}
        {%- do checks.append({'reason': 'invalid_enum', 'column': column.name,
            'condition': column.name ~ ' not in ' ~ lara_sql_in_list(column['values'])}) -%}
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
            'condition': '(_invalid_' ~ column.name ~ ' or ' ~ lara_list_has_blank(column.name) ~ ')'}) -%}
    {%- endfor -%}
    {%- for column in columns if column.name == 'ts' and column.lara_type == 'timestamp' -%}
        {%- do checks.append({'reason': 'timestamp_outside_partition', 'column': column.name,
            'condition': 'abs(' ~ lara_days_between('_partition_date', 'cast(' ~ column.name ~ ' as date)') ~ ') > '
                ~ (var('partition_ts_tolerance_days') | int)}) -%}
    {%- endfor -%}
    {{ return(checks) }}
{% endmacro %}


{% macro lara_split_part(expression, delimiter, part) %}
    {{ return(adapter.dispatch('lara_split_part', 'lara')(expression, delimiter, part)) }}
{% endmacro %}

{% macro default__lara_split_part(expression, delimiter, part) -%}
    split_part({{ expression }}, '{{ delimiter }}', {{ part }})
{%- endmacro %}
