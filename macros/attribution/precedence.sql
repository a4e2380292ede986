{#- Rule precedence, metrics.md (Attribution): rules are tried in order per
    action, a rule that finds nothing passes on to the next.

    lara_attribution_method(direct, placement, has_document_credit, temporal):
    the method that resolves the action (`direct`, `placement`, `document`,
    `temporal`), null when unattributed. Arguments are SQL expressions: the
    three candidate retrieval ids and a boolean "rule 3 credited >= 1
    retrieval". -#}
{% macro lara_attribution_method(direct, placement, has_document_credit, temporal) -%}
    case
        when {{ direct }} is not null then 'direct'
        when {{ placement }} is not null then 'placement'
        when {{ has_document_credit }} then 'document'
        when {{ temporal }} is not null then 'temporal'
    end
{%- endmacro %}

{#- lara_is_lineage_method(method): direct, placement or document (the methods
    that may credit a retrieval-driven outcome, Tier 3). -#}
{% macro lara_is_lineage_method(method) -%}
    coalesce({{ method }} in ('direct', 'placement', 'document'), false)
{%- endmacro %}
