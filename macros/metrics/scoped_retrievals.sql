{#- lara_scoped_retrieval_facts(fact_columns, extra_columns=[]): the body of
    the `scoped` CTE shared by the Tier aggregates: every logged retrieval
    (synthetic ones included, so exclusions can be counted) with its scope
    flags and the requested columns of fct_retrievals (null outside the
    Tier scope). `fact_columns` are fct_retrievals columns, as is or as
    (column, expression) pairs over `retrieval_facts`; `extra_columns` are
    (alias, expression) pairs over `retrievals` (int_retrievals_scoped);
    `where` filters the retrievals (a daily aggregate passes its days). -#}
{% macro lara_scoped_retrieval_facts(fact_columns, extra_columns=[], where='true') %}
    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.retrieval_date,
        retrievals.surface,
        retrievals.retrieval_role,
        retrievals.is_synthetic,
        not retrievals.is_synthetic and retrievals.is_misrouted as is_excluded_misrouted,
        coalesce(retrieval_facts.is_in_tier_scope, false) as is_in_scope,
        {%- for alias, expression in extra_columns %}
        {{ expression }} as {{ alias }},
        {%- endfor %}
        {%- for column in fact_columns %}
        {%- if column is string %}
        retrieval_facts.{{ column }}{{ ',' if not loop.last }}
        {%- else %}
        {{ column[1] }} as {{ column[0] }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from {{ ref('int_retrievals_scoped') }} as retrievals
    left join {{ ref('fct_retrievals') }} as retrieval_facts
        on retrievals.retrieval_id = retrieval_facts.retrieval_id
    where {{ where }}
{% endmacro %}
