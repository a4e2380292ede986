{#- Tier 1 IR metrics (metrics.md), as aggregate expressions over one row per
    (retrieval, distinct returned asset) with its rank in the de-duplicated
    list and its resolved grade (null = unjudged = not relevant, gain 0).
    Use with `group by retrieval_id`; K is any positive integer.

    lara_precision_at_k(rank, grade, k): relevant assets (grade >= var
    relevant_grade_min) at ranks <= k, divided by k even when fewer were
    returned (trec_eval P_k). With k = 1: precision@1. -#}
{% macro lara_precision_at_k(rank_column, grade_column, k, relevant_grade_min=none) -%}
    {%- set grade_min = var('relevant_grade_min') if relevant_grade_min is none else relevant_grade_min -%}
    cast(sum(case when {{ rank_column }} <= {{ k }} and {{ grade_column }} >= {{ grade_min }} then 1 else 0 end) as double)
    / cast({{ k }} as double)
{%- endmacro %}

{#- lara_dcg_at_k(rank, grade, k): sum over ranks i <= k of grade_i /
    log2(i + 1) (gain = grade, trec_eval ndcg_cut). Over returned ranks it is
    the DCG; over the judged grades ranked descending it is the ideal DCG. -#}
{% macro lara_dcg_at_k(rank_column, grade_column, k) -%}
    coalesce(sum(
        case
            when {{ rank_column }} <= {{ k }} and {{ grade_column }} > 0
                then cast({{ grade_column }} as double) / log2({{ rank_column }} + 1.0)
            else 0.0
        end
    ), 0.0)
{%- endmacro %}

{#- lara_ndcg(dcg, ideal_dcg): dcg / ideal_dcg, 0 when the ideal DCG is 0
    (trec_eval ndcg_cut). Row-level expression. -#}
{% macro lara_ndcg(dcg, ideal_dcg) -%}
    case
        when coalesce({{ ideal_dcg }}, 0.0) > 0.0 then coalesce({{ dcg }}, 0.0) / {{ ideal_dcg }}
        else 0.0
    end
{%- endmacro %}
