{#- The log-contract table names, in contract order. -#}
{% macro lara_contract_table_names() %}
    {{ return(lara_contract().keys() | list) }}
{% endmacro %}
