-- Hand-written reference for the benchmark (lara bench): the scope and Tier 1
-- columns of marts.fct_retrievals computed in one DuckDB script straight from
-- the raw Parquet files, outside dbt. Same definitions as the dbt models
-- (int_retrievals_scoped, int_prompts_scoped, int_retrieval_assets,
-- int_relevance_labels_resolved, int_retrieval_relevance, fct_retrievals) on
-- clean input: no quarantine, no de-duplication of re-delivered rows, no
-- tests. Tier 2/3 signals (attribution) are not part of the reference.
-- Placeholders: {raw} (the raw folder), {k} (var lara_k), {grade_min}
-- (var relevant_grade_min), {good_ndcg} (var tier1_good_ndcg).

create or replace temp view ref_prompts as
select
    prompt_id,
    session_guid,
    surface,
    coalesce(is_synthetic, false) as is_synthetic
from read_parquet('{raw}/prompts/*/*.parquet');

create or replace temp view ref_retrievals as
select
    retrieval_id,
    prompt_id,
    session_guid,
    retrieval_role,
    returned_asset_ids,
    displayed_asset_ids,
    cast(ts as timestamp) as retrieved_at
from read_parquet('{raw}/retrievals/*/*.parquet');

create or replace temp table ref_labels as
select retrieval_id, asset_id, grade
from (
    select
        retrieval_id,
        asset_id,
        grade,
        row_number() over (
            partition by retrieval_id, asset_id
            order by case when judge = 'human' then 0 else 1 end, judged_at desc, grade desc
        ) as judgement_rank
    from read_parquet('{raw}/relevance_labels/*/*.parquet')
)
where judgement_rank = 1;

create or replace temp table ref_prompt_scope as
with
synthetic_sessions as (
    select session_guid, bool_or(is_synthetic) as is_synthetic_session
    from ref_prompts
    group by session_guid
),
retrieval_counts as (
    select prompt_id, count(*) as retrieval_count
    from ref_retrievals
    group by prompt_id
),
prompt_labels as (
    select prompt_id, has_retrieval_intent
    from (
        select
            prompt_id,
            has_retrieval_intent,
            row_number() over (
                partition by prompt_id
                order by case when judge = 'human' then 0 else 1 end, judged_at desc
            ) as judgement_rank
        from read_parquet('{raw}/prompt_labels/*/*.parquet')
    )
    where judgement_rank = 1
),
goal_labels as (
    select prompt_id, goal_achieved
    from (
        select
            prompt_id,
            goal_achieved,
            row_number() over (
                partition by prompt_id
                order by case when judge = 'human' then 0 else 1 end, judged_at desc
            ) as judgement_rank
        from read_parquet('{raw}/goal_labels/*/*.parquet')
    )
    where judgement_rank = 1
)
select
    p.prompt_id,
    p.surface,
    p.surface in ('chat', 'editor_assistant') as is_assistant_surface,
    p.is_synthetic or s.is_synthetic_session as is_synthetic,
    coalesce(coalesce(rc.retrieval_count, 0) > 0 and pl.has_retrieval_intent = false, false)
        as is_misrouted,
    gl.prompt_id is not null as is_goal_labelled,
    gl.goal_achieved
from ref_prompts as p
left join synthetic_sessions as s on p.session_guid = s.session_guid
left join retrieval_counts as rc on p.prompt_id = rc.prompt_id
left join prompt_labels as pl on p.prompt_id = pl.prompt_id
left join goal_labels as gl on p.prompt_id = gl.prompt_id;

-- distinct returned assets, ranked in the de-duplicated list (trec_eval run)
create or replace temp table ref_assets as
select
    retrieval_id,
    asset_id,
    row_number() over (partition by retrieval_id order by returned_position) as asset_rank
from (
    select retrieval_id, asset_id, min(returned_position) as returned_position
    from (
        select
            retrieval_id,
            unnest(returned_asset_ids) as asset_id,
            generate_subscripts(returned_asset_ids, 1) as returned_position
        from ref_retrievals
    )
    group by retrieval_id, asset_id
);

create or replace temp table ref_relevance as
with
labelled as (
    select retrieval_id, count(*) as judged_asset_count
    from ref_labels
    group by retrieval_id
),
returned_counts as (
    select retrieval_id, count(*) as distinct_returned_count
    from ref_assets
    group by retrieval_id
),
returned_scores as (
    select
        a.retrieval_id,
        count(*) filter (where a.asset_rank <= 1 and l.grade >= {grade_min}) / 1.0
            as precision_at_1,
        count(*) filter (where a.asset_rank <= {k} and l.grade >= {grade_min}) / {k}.0
            as precision_at_k,
        coalesce(sum(l.grade / log2(a.asset_rank + 1.0))
            filter (where a.asset_rank <= {k} and l.grade > 0), 0.0) as dcg_at_k,
        count(l.grade) filter (where a.asset_rank <= {k}) as judged_in_top_k_count
    from ref_assets as a
    inner join labelled as lr on a.retrieval_id = lr.retrieval_id
    left join ref_labels as l on a.retrieval_id = l.retrieval_id and a.asset_id = l.asset_id
    group by a.retrieval_id
),
ideal_scores as (
    select
        retrieval_id,
        coalesce(sum(grade / log2(ideal_rank + 1.0))
            filter (where ideal_rank <= {k} and grade > 0), 0.0) as ideal_dcg_at_k
    from (
        select
            retrieval_id,
            grade,
            row_number() over (partition by retrieval_id order by grade desc, asset_id) as ideal_rank
        from ref_labels
    )
    group by retrieval_id
)
select
    r.retrieval_id,
    lr.retrieval_id is not null as is_labelled,
    coalesce(lr.judged_asset_count, 0) as judged_asset_count,
    coalesce(rc.distinct_returned_count, 0) as distinct_returned_count,
    case when lr.retrieval_id is not null then coalesce(rs.precision_at_1, 0.0) end
        as precision_at_1,
    case when lr.retrieval_id is not null then coalesce(rs.precision_at_k, 0.0) end
        as precision_at_k,
    case when lr.retrieval_id is not null then coalesce(rs.dcg_at_k, 0.0) end as dcg_at_k,
    i.ideal_dcg_at_k,
    case
        when lr.retrieval_id is not null
            then case
                when coalesce(i.ideal_dcg_at_k, 0.0) > 0.0
                    then coalesce(rs.dcg_at_k, 0.0) / i.ideal_dcg_at_k
                else 0.0
            end
    end as ndcg_at_k,
    case
        when lr.retrieval_id is not null and rc.distinct_returned_count > 0
            then cast(rs.judged_in_top_k_count as double) / least(rc.distinct_returned_count, {k})
    end as label_coverage_at_k
from (select distinct retrieval_id from ref_retrievals) as r
left join returned_counts as rc on r.retrieval_id = rc.retrieval_id
left join labelled as lr on r.retrieval_id = lr.retrieval_id
left join returned_scores as rs on r.retrieval_id = rs.retrieval_id
left join ideal_scores as i on r.retrieval_id = i.retrieval_id;

create or replace table ref_fct_retrievals as
with
scoped as (
    select
        r.*,
        coalesce(p.surface, 'unknown') as surface,
        coalesce(p.is_assistant_surface, false) as is_assistant_surface,
        coalesce(p.is_synthetic, s.is_synthetic_session, false) as is_synthetic,
        coalesce(p.is_misrouted, false) as is_misrouted,
        p.is_goal_labelled,
        p.goal_achieved
    from ref_retrievals as r
    left join ref_prompt_scope as p on r.prompt_id = p.prompt_id
    left join (
        select session_guid, bool_or(is_synthetic) as is_synthetic_session
        from ref_prompts
        group by session_guid
    ) as s on r.session_guid = s.session_guid
)
select
    sc.retrieval_id,
    sc.prompt_id,
    sc.session_guid,
    sc.surface,
    sc.is_assistant_surface,
    coalesce(sc.retrieval_role, 'unknown') as retrieval_role,
    sc.retrieved_at,
    cast(sc.retrieved_at as date) as retrieval_date,
    sc.is_misrouted,
    not sc.is_misrouted as is_in_tier_scope,
    len(sc.returned_asset_ids) as returned_count,
    coalesce(rel.distinct_returned_count, 0) as distinct_returned_count,
    len(sc.returned_asset_ids) = 0 as is_empty,
    coalesce(len(sc.displayed_asset_ids), 0) as displayed_count,
    coalesce(
        len(sc.displayed_asset_ids) > 0,
        sc.surface = 'template_search' and len(sc.returned_asset_ids) > 0
    ) as is_displayed,
    coalesce(rel.is_labelled, false) as is_labelled,
    coalesce(rel.judged_asset_count, 0) as judged_asset_count,
    rel.precision_at_1,
    rel.precision_at_k,
    rel.dcg_at_k,
    rel.ideal_dcg_at_k,
    rel.ndcg_at_k,
    rel.label_coverage_at_k,
    rel.ndcg_at_k >= {good_ndcg} as is_tier1_good,
    sc.is_goal_labelled,
    sc.goal_achieved
from scoped as sc
left join ref_relevance as rel on sc.retrieval_id = rel.retrieval_id
where not sc.is_synthetic;
