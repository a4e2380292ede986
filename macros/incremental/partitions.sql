{#
    Custom incremental strategy `lara_replace_partitions` of the base models
    (DuckDB; the Spark implementation of the same name is in
    spark_strategies.sql): a run replaces every row of the raw
    partitions it read (lara_pending_partitions) and every earlier version
    of a key it re-judged, then inserts the batch. A partition is read whole,
    so replacing it whole also removes the rows of a file rewritten in place
    with fewer lines, or of a file that emptied (the batch holds them as
    tombstones for one run, lara_stage_source). Tombstones a completed run
    has reflected are dropped.
#}
{% macro get_incremental_lara_replace_partitions_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set pending = lara_pending_partitions(lara_base_table_name(target)) -%}
    {%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
    delete from {{ target }}
    where
        {% if pending is none -%}
        true
        {%- else -%}
        _partition_value in {{ lara_sql_in_list(pending) }}
        or _dedup_key in (select _dedup_key from {{ arg_dict['temp_relation'] }})
        {%- if manifest is not none %}
        or (
            _row_status = 'removed'
            and _lara_loaded_at <= (select max(reflected_through) from {{ manifest }})
        )
        {%- endif %}
        {%- endif %};
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{% macro lara_base_table_name(relation) %}
    {#- The contract table of a base model relation (base_lara__<table>). -#}
    {{ return(relation.identifier | replace('base_lara__', '')) }}
{% endmacro %}


{#
    Custom incremental strategy `lara_replace_raw_rows` of dq_quarantine
    (DuckDB): delete the rows of every raw row (table, file, line) whose base
    row was loaded or changed status after the last completed run, in any
    status, then insert the batch (those of them that are quarantined now).
#}
{% macro get_incremental_lara_replace_raw_rows_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    using (
        {%- for table_name in lara_contract_table_names() %}
        select '{{ table_name }}' as table_name, _source_file, _source_line
        from {{ ref('base_lara__' ~ table_name) }}
        where _lara_loaded_at > (
            select coalesce(run_limits.lower_limit, cast('1900-01-01' as timestamp))
            from {{ ref('lara_run_limits') }} as run_limits
        )
        {%- if not loop.last %}
        union all
        {%- endif %}
        {%- endfor %}
    ) as changed
    where
        {{ target }}.table_name = changed.table_name
        and {{ target }}.source_file = changed._source_file
        and {{ target }}.source_line = changed._source_line;
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}
