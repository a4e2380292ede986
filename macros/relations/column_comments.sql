{#
    How descriptions become comments: Spark views (below) and DuckDB
    relations (`duckdb__persist_docs`, at the end of the file).

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


{#
    DuckDB: comments written only where they differ. dbt writes a model's
    description and every column's on each run (`persist_docs`: two column
    listings, a comment statement for the relation and one for its
    columns). On a scheduled run most models are incremental tables whose
    comments are already the ones in the YAML, and those statements were a
    fifth of a run's model time with nothing new (bundled sample: 3.3 of
    15.3 node seconds over 90 models). This reads the relation's stored
    comments in one query and writes only the ones that differ: all of them
    on a new or replaced relation, none on an unchanged one. Same rules as
    dbt's `default__persist_docs`: the `persist_docs` config, documented
    columns matched by `validate_doc_columns` (which warns about the absent
    ones), quoted names exactly and others case-insensitively.
#}
{% macro duckdb__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- set write_relation = for_relation and config.persist_relation_docs() and model.description -%}
    {%- set write_columns = for_columns and config.persist_column_docs() and model.columns -%}
    {%- if write_relation or write_columns -%}
        {%- set stored = run_query(lara_stored_comments_sql(relation)) -%}
        {%- set relation_comment = {'text': none} -%}
        {%- set column_comments = {} -%}
        {%- set lower_column_comments = {} -%}
        {%- set column_names = [] -%}
        {%- for row in stored.rows -%}
            {%- if row[0] is none -%}
                {%- do relation_comment.update({'text': row[1]}) -%}
            {%- else -%}
                {%- do column_names.append(row[0]) -%}
                {%- do column_comments.update({row[0]: row[1]}) -%}
                {%- do lower_column_comments.update({row[0] | lower: row[1]}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set statements = [] -%}
        {%- if write_relation and relation_comment.text != model.description -%}
            {%- do statements.append(alter_relation_comment(relation, model.description)) -%}
        {%- endif -%}
        {%- if write_columns -%}
            {%- set documented = validate_doc_columns(relation, model.columns, column_names) -%}
            {%- for column_name, column in documented.items() -%}
                {%- set stored_comment = column_comments.get(column_name) if column.get('quote') else lower_column_comments.get(column_name | lower) -%}
                {%- if stored_comment != column.description -%}
                    {%- do statements.append(
                        'comment on column ' ~ relation ~ '.'
                        ~ (adapter.quote(column_name) if column.get('quote') else column_name)
                        ~ ' is ' ~ duckdb_escape_comment(column.description) ~ ';') -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
        {%- if statements -%}
            {%- do run_query(statements | join('\n')) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}


{% macro lara_stored_comments_sql(relation) -%}
    {#- A DuckDB relation's stored comments: one row with a null name for the
        table or view itself, one per column. -#}
    {%- set filter -%}
        database_name = {{ lara_sql_string(relation.database) }}
        and schema_name = {{ lara_sql_string(relation.schema) }}
    {%- endset -%}
    select cast(null as varchar) as column_name, comment
    from duckdb_tables()
    where {{ filter }} and table_name = {{ lara_sql_string(relation.identifier) }}
    union all
    select cast(null as varchar) as column_name, comment
    from duckdb_views()
    where {{ filter }} and view_name = {{ lara_sql_string(relation.identifier) }}
    union all
    select column_name, comment
    from duckdb_columns()
    where {{ filter }} and table_name = {{ lara_sql_string(relation.identifier) }}
{%- endmacro %}
