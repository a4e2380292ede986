{#- dbt-spark applies a `not_null` constraint of an enforced contract with
    `alter table ... change column ... set not null`, which only Delta and
    Iceberg tables accept. On plain Parquet tables (the local session target)
    the constraint is skipped here; the column's not_null data test still
    checks it. -#}
{% macro spark__persist_constraints(relation, model) %}
    {%- if config.get('file_format', validator=validation.any[basestring]) in ['delta', 'iceberg'] -%}
        {%- do alter_table_add_constraints(relation, model.constraints) -%}
        {%- do alter_column_set_constraints(relation, model.columns) -%}
    {%- endif -%}
{% endmacro %}
