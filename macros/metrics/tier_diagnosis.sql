{#- Reading Tier 1 and Tier 2 together (metrics.md), per labelled retrieval.
    Tier 1 good = NDCG@K >= var tier1_good_ndcg. Failure (ORF) is checked
    first:
        good, failure             downstream_or_routing_issue
        bad, failure              retrieval_failure_visible
        good, used, no failure    healthy
        bad, used, no failure     masked_retrieval_failure
        neither used nor failed   unobserved
    used = GPR or ACR. Null when the retrieval is unlabelled (ndcg null). -#}
{% macro lara_tier_diagnosis(ndcg, is_used, has_failure) -%}
    case
        when {{ ndcg }} is null then null
        when {{ has_failure }} and {{ ndcg }} >= {{ var('tier1_good_ndcg') }} then 'downstream_or_routing_issue'
        when {{ has_failure }} then 'retrieval_failure_visible'
        when {{ is_used }} and {{ ndcg }} >= {{ var('tier1_good_ndcg') }} then 'healthy'
        when {{ is_used }} then 'masked_retrieval_failure'
        else 'unobserved'
    end
{%- endmacro %}

{#- The diagnosis values, in the order of metrics.md. -#}
{% macro lara_tier_diagnoses() -%}
    {{ return(['downstream_or_routing_issue', 'retrieval_failure_visible', 'healthy',
               'masked_retrieval_failure', 'unobserved']) }}
{%- endmacro %}
