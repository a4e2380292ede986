{#
    Custom incremental strategy `lara_replace_partitions` of the base models
    (DuckDB; the Spark implementation of the same name is in
    spark_strategies.sql): a run replaces every row of the raw
    partitions it read (lara_pending_partitions) and every earlier version
    of a key it re-judged, then inserts the batch. A partition is read whole,
    so replacing it whole also removes the rows of a file rewritten in place
    with fewer lines, or of a file that emptied.
#}
{% macro get_incremental_lara_replace_partitions_sql(arg_dict) %}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set pending = lara_pending_partitions(lara_base_table_name(target)) -%}
    delete from {{ target }}
    where
        {% if pending is none -%}
        true
        {%- else -%}
        _partition_value in {{ lara_sql_in_list(pending) }}
        or _dedup_key in (select _dedup_key from {{ arg_dict['temp_relation'] }})
        {%- endif %};
    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{% macro lara_base_table_name(relation) %}
    {#- The contract table of a base model relation (base_lara__<table>). -#}
    {{ return(relation.identifier | replace('base_lara__', '')) }}
{% endmacro %}
