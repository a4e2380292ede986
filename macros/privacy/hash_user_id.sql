{#- lara_hash_user_id(column): a pseudonymous user key for public marts.
    sha256 of '<salt>|<user id>' as 64 lower-case hex characters, the salt
    read from env var LARA_USER_ID_SALT (default 'lara-sample-salt', for the
    generated samples only: set a secret salt in production, and keep it out
    of the exports). Null stays null. With var lara_expose_user_ids: true the
    raw id is returned unchanged (private deployments only; public marts
    then carry raw ids). -#}
{% macro lara_hash_user_id(column) -%}
    {%- if var('lara_expose_user_ids', false) -%}
        cast({{ column }} as {{ dbt.type_string() }})
    {%- else -%}
        {{ return(adapter.dispatch('lara_hash_user_id', 'lara')(column, lara_user_id_salt())) }}
    {%- endif -%}
{%- endmacro %}

{#- The salt as a quoted SQL string literal. -#}
{% macro lara_user_id_salt() -%}
    '{{ env_var("LARA_USER_ID_SALT", "lara-sample-salt") | replace("'", "''") }}'
{%- endmacro %}

{% macro default__lara_hash_user_id(column, salt) -%}
    lower(sha2({{ salt }} || '|' || cast({{ column }} as {{ dbt.type_string() }}), 256))
{%- endmacro %}

{% macro duckdb__lara_hash_user_id(column, salt) -%}
    sha256({{ salt }} || '|' || cast({{ column }} as varchar))
{%- endmacro %}
