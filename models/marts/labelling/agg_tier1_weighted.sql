{#- Tier 1 means (precision@1, precision@K, NDCG@K) per surface x role,
    overall and every roll-up, design-weighted (Hajek ratio estimator,
    weights 1 / inclusion probability of the label sample design) with a
    stratified linearisation variance, and the unweighted means beside them.
    Formulas and decisions: _labelling__models.yml and docs/labelling.md.

    Recomputed whole (the design weights and the variance are over every
    labelled retrieval), on a run that loaded a row of any contract table
    only (lara_whole_table_config): a run with nothing new keeps the table. -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{%- set metrics = ['precision_at_1', 'precision_at_k', 'ndcg_at_k'] -%}
{{ lara_whole_table_config() }}

with

{{ lara_tables_this_run_cte() }}

retrieval_facts as (

    select
        retrieval_id,
        surface,
        retrieval_role,
        is_labelled,
        precision_at_1,
        precision_at_k,
        ndcg_at_k
    from {{ ref('fct_retrievals') }}
    where is_in_tier_scope and {{ lara_if_tables_loaded() }}

),

sample_design as (

    select * from {{ ref('stg_lara__label_sample_design') }}
    where {{ lara_if_tables_loaded() }}

),

design_table as (

    select count(*) as design_row_count
    from sample_design

),

{# A retrieval drawn by several samples keeps its latest design row. A zero
    probability cannot weight (the contract allows 0): such rows are ignored. #}
ranked_design as (

    select
        retrieval_id,
        stratum,
        inclusion_probability,
        sampled_at,
        row_number() over (
            partition by retrieval_id
            order by sampled_at desc
        ) as design_rank
    from sample_design
    where inclusion_probability > 0

),

latest_design as (

    select
        retrieval_id,
        stratum,
        inclusion_probability,
        sampled_at
    from ranked_design
    where design_rank = 1

),

{# One row per in-scope retrieval; weighted units are labelled retrievals
    with a design row. #}
sample_units as (

    select
        retrieval_facts.surface,
        retrieval_facts.retrieval_role,
        coalesce(retrieval_facts.is_labelled, false) as is_labelled,
        latest_design.retrieval_id is not null as has_design,
        coalesce(retrieval_facts.is_labelled, false) and latest_design.retrieval_id is not null as is_weighted,
        latest_design.stratum,
        latest_design.inclusion_probability,
        latest_design.sampled_at,
        {% for metric in metrics -%}
        cast(retrieval_facts.{{ metric }} as double) as {{ metric }},
        {% endfor -%}
        1.0 / latest_design.inclusion_probability as design_weight
    from retrieval_facts
    left join latest_design
        on retrieval_facts.retrieval_id = latest_design.retrieval_id

),

weighted_units as (

    select * from sample_units
    where is_weighted

),

{# Per domain (grouping-sets cell): counts, unweighted sums and the Hajek
    totals. #}
cell_totals as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        count(*) as in_scope_retrieval_count,
        {{ lara_count_if('is_labelled') }} as labelled_retrieval_count,
        {{ lara_count_if('has_design') }} as design_retrieval_count,
        {{ lara_count_if('is_weighted') }} as weighted_retrieval_count,
        {{ lara_count_if('is_labelled and not has_design') }} as labelled_without_design_count,
        {{ lara_count_if('has_design and not is_labelled') }} as design_unlabelled_count,
        count(distinct case when is_weighted then stratum end) as design_stratum_count,
        max(case when is_weighted then sampled_at end) as latest_sampled_at,
        {{ lara_count_if('is_labelled and precision_at_1 = 1') }} as relevant_at_1_retrieval_count,
        {% for metric in metrics -%}
        coalesce(sum(case when is_labelled then {{ metric }} end), 0.0) as {{ metric }}_sum,
        coalesce(sum(case when is_labelled then {{ metric }} * {{ metric }} end), 0.0)
            as {{ metric }}_sum_of_squares,
        sum(case when is_weighted then design_weight * {{ metric }} end) as {{ metric }}_weighted_sum,
        {% endfor -%}
        sum(case when is_weighted then design_weight end) as weight_sum,
        sum(case when is_weighted then design_weight * design_weight end) as weight_sum_of_squares
    from sample_units
    group by {{ lara_cube(dimensions | map('first') | list) }}

),

cell_means as (

    select
        *,
        {% for metric in metrics -%}
        {{ metric }}_weighted_sum / weight_sum as {{ metric }}_weighted_mean,
        {% endfor -%}
        weighted_retrieval_count > 0 as has_weighted_units
    from cell_totals

),

{# The design strata over the whole weighted sample: n_h and the sampling
    fraction f_h (mean inclusion probability of the stratum's units). #}
strata as (

    select
        stratum,
        count(*) as stratum_unit_count,
        avg(inclusion_probability) as stratum_sampling_fraction
    from weighted_units
    group by stratum

),

{# Per (domain, stratum): the sums that give sum z and sum z^2 of the
    linearised values z_i = w_i (y_i - mean_d) / N_d (0 outside the domain). #}
cell_stratum_sums as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        stratum,
        {% for metric in metrics -%}
        sum(design_weight * {{ metric }}) as {{ metric }}_weighted_sum,
        sum(design_weight * design_weight * {{ metric }}) as {{ metric }}_squared_weight_sum,
        sum(design_weight * design_weight * {{ metric }} * {{ metric }}) as {{ metric }}_squared_weighted_square_sum,
        {% endfor -%}
        sum(design_weight) as weight_sum,
        sum(design_weight * design_weight) as weight_sum_of_squares
    from weighted_units
    group by {{ lara_cube(dimensions | map('first') | list, fixed=['stratum']) }}

),

{# Per (domain, stratum) variance term (1 - f_h) n_h / (n_h - 1)
    (sum z^2 - (sum z)^2 / n_h), before dividing by N_d^2; a stratum with a
    single unit contributes 0. #}
cell_stratum_terms as (

    select
        cell_stratum_sums.grouping_level,
        cell_stratum_sums.surface,
        cell_stratum_sums.retrieval_role,
        cell_stratum_sums.stratum,
        {% for metric in metrics -%}
        case
            when strata.stratum_unit_count > 1
                then
                    (1.0 - strata.stratum_sampling_fraction)
                    * strata.stratum_unit_count / (strata.stratum_unit_count - 1.0)
                    * (
                        (
                            cell_stratum_sums.{{ metric }}_squared_weighted_square_sum
                            - 2.0 * cell_means.{{ metric }}_weighted_mean
                            * cell_stratum_sums.{{ metric }}_squared_weight_sum
                            + cell_means.{{ metric }}_weighted_mean * cell_means.{{ metric }}_weighted_mean
                            * cell_stratum_sums.weight_sum_of_squares
                        )
                        - (
                            cell_stratum_sums.{{ metric }}_weighted_sum
                            - cell_means.{{ metric }}_weighted_mean * cell_stratum_sums.weight_sum
                        ) * (
                            cell_stratum_sums.{{ metric }}_weighted_sum
                            - cell_means.{{ metric }}_weighted_mean * cell_stratum_sums.weight_sum
                        ) / strata.stratum_unit_count
                    )
            else 0.0
        end as {{ metric }}_variance_term,
        {% endfor -%}
        strata.stratum_unit_count
    from cell_stratum_sums
    inner join strata
        on cell_stratum_sums.stratum = strata.stratum
    inner join cell_means
        on
            cell_stratum_sums.grouping_level = cell_means.grouping_level
            and cell_stratum_sums.surface = cell_means.surface
            and cell_stratum_sums.retrieval_role = cell_means.retrieval_role

),

cell_variances as (

    select
        cell_stratum_terms.grouping_level,
        cell_stratum_terms.surface,
        cell_stratum_terms.retrieval_role,
        {% for metric in metrics -%}
        greatest(
            0.0,
            sum(cell_stratum_terms.{{ metric }}_variance_term)
            / (max(cell_means.weight_sum) * max(cell_means.weight_sum))
        ) as {{ metric }}_weighted_variance,
        {% endfor -%}
        count(*) as variance_stratum_count
    from cell_stratum_terms
    inner join cell_means
        on
            cell_stratum_terms.grouping_level = cell_means.grouping_level
            and cell_stratum_terms.surface = cell_means.surface
            and cell_stratum_terms.retrieval_role = cell_means.retrieval_role
    group by
        cell_stratum_terms.grouping_level,
        cell_stratum_terms.surface,
        cell_stratum_terms.retrieval_role

),

final as (

    select
        cell_means.grouping_level,
        cell_means.surface,
        cell_means.retrieval_role,
        {{ var('lara_k') }} as k,
        {{ var('relevant_grade_min') }} as relevant_grade_min,
        case
            when design_table.design_row_count = 0 then 'no_sample_design'
            when not cell_means.has_weighted_units then 'no_labelled_design_retrievals'
        end as weighted_null_reason,
        cell_means.in_scope_retrieval_count,
        cell_means.labelled_retrieval_count,
        cell_means.design_retrieval_count,
        cell_means.weighted_retrieval_count,
        cell_means.labelled_without_design_count,
        cell_means.design_unlabelled_count,
        cell_means.design_stratum_count,
        cell_means.weight_sum as estimated_population_size,
        case
            when cell_means.weight_sum_of_squares > 0
                then cell_means.weight_sum * cell_means.weight_sum / cell_means.weight_sum_of_squares
        end as effective_sample_size,
        cell_means.relevant_at_1_retrieval_count,
        {{ lara_rate_columns(
            'precision_at_1_mean', 'cell_means.relevant_at_1_retrieval_count', 'cell_means.labelled_retrieval_count'
        ) }},
        {% for metric in metrics -%}
        {% if metric != 'precision_at_1' -%}
        cell_means.{{ metric }}_sum,
        cell_means.{{ metric }}_sum_of_squares,
        {{ lara_rate('cell_means.' ~ metric ~ '_sum', 'cell_means.labelled_retrieval_count') }} as {{ metric }}_mean,
        {{ lara_mean_ci_low(
            'cell_means.' ~ metric ~ '_sum',
            'cell_means.' ~ metric ~ '_sum_of_squares',
            'cell_means.labelled_retrieval_count'
        ) }} as {{ metric }}_mean_ci_low,
        {{ lara_mean_ci_high(
            'cell_means.' ~ metric ~ '_sum',
            'cell_means.' ~ metric ~ '_sum_of_squares',
            'cell_means.labelled_retrieval_count'
        ) }} as {{ metric }}_mean_ci_high,
        {% endif -%}
        cell_means.{{ metric }}_weighted_mean,
        cell_variances.{{ metric }}_weighted_variance,
        sqrt(cell_variances.{{ metric }}_weighted_variance) as {{ metric }}_weighted_std_error,
        cell_means.{{ metric }}_weighted_mean - 1.96 * sqrt(cell_variances.{{ metric }}_weighted_variance)
            as {{ metric }}_weighted_ci_low,
        cell_means.{{ metric }}_weighted_mean + 1.96 * sqrt(cell_variances.{{ metric }}_weighted_variance)
            as {{ metric }}_weighted_ci_high,
        {% endfor -%}
        cell_means.latest_sampled_at,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from cell_means
    cross join design_table
    left join cell_variances
        on
            cell_means.grouping_level = cell_variances.grouping_level
            and cell_means.surface = cell_variances.surface
            and cell_means.retrieval_role = cell_variances.retrieval_role

)

select * from final
