{#- Helpers over the log contract (lara_contract(), log_contract.sql). -#}

{#- The log-contract table names, in contract order. -#}
{% macro lara_contract_table_names() %}
    {{ return(lara_contract().keys() | list) }}
{% endmacro %}


{% macro lara_contract_tables() %}
    {#- The contract tables as {name, required_table, key, columns}. -#}
    {%- set tables = [] -%}
    {%- for name, spec in lara_contract().items() -%}
        {%- do tables.append({'name': name, 'required_table': spec.required_table,
            'key': spec.key, 'columns': spec.columns}) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}
