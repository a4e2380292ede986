{#
    Column comments of Spark views. dbt-spark writes every documented column's
    description into `create or replace view ... (col comment '...')`. A Hive
    metastore 2.x (Spark's built-in one, and most self-managed ones) stores a
    column comment in COLUMNS_V2.COMMENT, a VARCHAR(256): a longer description
    fails the insert, the metastore retries it ten times two seconds apart, and
    only then does Spark store the view another way. On the local test target
    that cost about 20 s per view. The var `spark_column_comment_max_chars`
    (default 256; 0 = no limit, e.g. Unity Catalog) cuts longer descriptions
    to that many characters, the last one an ellipsis; the full text stays in
    the dbt docs. Tables are not affected: dbt-spark does not comment the
    columns of Parquet tables.
-#}
{% macro get_column_comment_sql(column_name, column_dict) -%}
    {#- Overrides dbt-spark 1.11 (by name): the same clause, with the
        description cut to the metastore's limit. -#}
    {%- set column_comment_clause = '' -%}
    {%- if column_name in column_dict and column_dict[column_name]['description'] -%}
        {%- set description = lara_spark_comment_text(column_dict[column_name]['description']) -%}
        {%- set column_comment_clause = "comment '" ~ (description | replace("'", "\\'")) ~ "'" -%}
    {%- endif -%}
    {{ adapter.quote(column_name) }} {{ column_comment_clause }}
{%- endmacro %}


{% macro lara_spark_comment_text(description) -%}
    {%- set limit = var('spark_column_comment_max_chars', 256) | int -%}
    {%- set text = description | trim -%}
    {%- if limit > 0 and text | length > limit -%}
        {%- set text = text[:limit - 1] ~ '…' -%}
    {%- endif -%}
    {{ return(text) }}
{%- endmacro %}
