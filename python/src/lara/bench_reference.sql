-- Metric definitions: metrics.md v2 (synthetic scope per prompt, placement
-- inheriting every resolved place with rule 3 on lineage-backed places only,
-- agent consumption confirmed by a later user action).
-- Hand-written reference for the benchmark (lara bench): every column of
-- marts.fct_retrievals (scope, Tier 1 quality, Tier 2 flags, Tier 3 counts,
-- goal label, Tier 1 x Tier 2 diagnosis), computed by one DuckDB script
-- straight from the raw files, outside dbt. Same definitions as the dbt chain
-- (stage_source / stg_*, the int_*_labels_resolved models,
-- int_prompts_scoped, int_retrievals_scoped, int_actions_scoped,
-- int_retrieval_assets, int_retrieval_relevance, int_prompt_sequences,
-- int_action_attributions, int_retrieval_signals, fct_retrievals), written
-- for speed rather than layering: typed Parquet columns, a few passes over
-- each raw table (an id-only pass finds re-delivered keys), one temp table per
-- stage, de-duplicated lists kept as lists (ranks are list positions, no
-- exploded asset table), attribution in a handful of joins and one window,
-- similarities computed only on the rows that need them, no tests.
--
-- Input handling (what the reference needs to give the mart's answer on
-- generated samples, clean or with bad rows; it is not a validator):
--   * Parquet files are read with their own types: a wrong physical type
--     stops dbt's build and is not re-checked here. Every table needs at
--     least one Parquet file (the generator writes some in its 'parquet' and
--     'mixed' formats); JSON Lines files (*.jsonl, *.jsonl.gz) are optional
--     (/dev/null heads each JSON file list, so a table without any reads as
--     no rows) and read as text, then parsed the way staging parses them.
--     Files are taken by extension: the `_` / `.`-prefixed files dbt skips
--     and the unknown extensions it refuses are not looked for.
--   * A row is dropped (quarantined in dbt) when a required column is null,
--     an id is blank, a timestamp / boolean / integer / list does not parse
--     (JSON Lines only), an enum is outside the contract after trim + lower,
--     a number is out of range or a list holds a null or blank id. Lines that
--     are not JSON objects read as all-null rows and fail the required-column
--     check. Not checked: the dt= folder name (invalid_partition; the
--     generator always writes dates) and columns missing from every Parquet
--     file of a table.
--   * Exact re-deliveries (same typed content) count once; a key delivered
--     with different contents is dropped in every version
--     (conflicting_duplicate). Contents are compared by a 64-bit hash of the
--     typed columns where dbt compares md5 texts.
-- Placeholders: {raw} (the raw folder), {k} (var lara_k), {grade_min}
-- (var relevant_grade_min), {good_ndcg} (var tier1_good_ndcg),
-- {research_window_s}, {research_similarity_min}, {substitution_roles}
-- (a SQL list of quoted roles), {rewrite_window_s}, {rewrite_similarity_min},
-- {user_id_salt} (env LARA_USER_ID_SALT, quoted for SQL).

set TimeZone = 'UTC';

-- ---------------------------------------------------------------- helpers

-- Parsing of JSON Lines text, as lara_typed_column does.
create or replace temp macro ref_ts(t) as timezone('UTC', try_cast(t as timestamptz));
create or replace temp macro ref_bool(t) as try_cast(lower(trim(t)) as boolean);
create or replace temp macro ref_int(t) as try_cast(try_cast(t as double) as bigint);
create or replace temp macro ref_list(t) as
    case when json_valid(t) and json_type(t) = 'ARRAY' then from_json(t, '["VARCHAR"]') end;
-- A JSON text that is not null parses (a typed value that is null failed).
create or replace temp macro ref_parses(t, v) as t is null or v is not null;
-- Validity checks shared by both formats.
-- A blank text (empty or spaces only: what trim() empties) sorts before '!',
-- so trim() runs only on the few texts that start below '!'.
create or replace temp macro ref_id_ok(x) as x is null or x >= '!' or trim(x) <> '';
create or replace temp macro ref_list_ok(l) as
    l is null
    or (
        list_count(l) = len(l)
        and (
            coalesce(list_min(l) >= '!', true)
            or not list_bool_or(list_transform(l, lambda e: trim(e) = ''))
        )
    );
-- Token Jaccard (lara_tokens, lara_token_set_jaccard): lower-case tokens split on runs of
-- non-alphanumerics, distinct (null for a null text); the Jaccard of two token
-- lists is null when either is null, 0 when neither has a token. Callers
-- tokenize into columns first (a macro argument is expanded, not shared) and
-- only on the rows that need a similarity.
create or replace temp macro ref_tokens(t) as
    list_distinct(list_filter(regexp_split_to_array(lower(t), '[^\p{L}\p{N}]+'), lambda w: w <> ''));
create or replace temp macro ref_jaccard(a, b) as
    case
        when a is null or b is null then null
        when len(list_distinct(list_concat(a, b))) = 0 then 0.0
        else len(list_intersect(a, b)) / len(list_distinct(list_concat(a, b)))
    end;

-- ---------------------------------------------------------------- clean rows

-- One clean row per key: valid rows, exact re-deliveries collapsed, keys with
-- more than one distinct content dropped. Keys delivered once (nearly all;
-- found on the ids alone) pass straight through; only repeated keys are
-- grouped and hashed.
create or replace temp table ref_prompts as
with
typed as (
    select
        prompt_id, session_guid, user_id,
        lower(trim(surface)) as surface,
        cast(ts as timestamp) as prompted_at,
        prompt_text,
        lower(trim(prompt_kind)) as prompt_kind,
        is_synthetic,
        true as parses
    from read_parquet('{raw}/prompts/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        prompt_id, session_guid, user_id,
        lower(trim(surface)),
        ref_ts(ts),
        prompt_text,
        lower(trim(prompt_kind)),
        ref_bool(is_synthetic),
        ref_parses(ts, ref_ts(ts)) and ref_parses(is_synthetic, ref_bool(is_synthetic))
    from read_json(
        ['/dev/null', '{raw}/prompts/dt=*/*.jsonl', '{raw}/prompts/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {
            prompt_id: 'VARCHAR', session_guid: 'VARCHAR', user_id: 'VARCHAR', surface: 'VARCHAR',
            ts: 'VARCHAR', prompt_text: 'VARCHAR', prompt_kind: 'VARCHAR', is_synthetic: 'VARCHAR'
        }
    )
),
valid as (
    select *
    from typed
    where
        parses
        and prompt_id is not null and session_guid is not null and user_id is not null
        and surface is not null and prompted_at is not null
        and ref_id_ok(prompt_id) and ref_id_ok(session_guid) and ref_id_ok(user_id)
        and surface in ('chat', 'editor_assistant', 'template_search')
        and (prompt_kind is null or prompt_kind in ('new_request', 'rewrite', 'follow_up'))
),
repeated as (
    select prompt_id
    from typed
    group by prompt_id
    having count(*) > 1
)
select
    prompt_id, session_guid, surface, prompted_at, prompt_text, prompt_kind,
    coalesce(is_synthetic, false) as is_synthetic, user_id
from valid
anti join repeated using (prompt_id)
union all
select
    prompt_id,
    any_value(session_guid),
    any_value(surface),
    any_value(prompted_at),
    any_value(prompt_text),
    any_value(prompt_kind),
    coalesce(any_value(is_synthetic), false),
    any_value(user_id)
from valid
semi join repeated using (prompt_id)
group by prompt_id
having
    min(hash(prompt_id, session_guid, user_id, surface, prompted_at, prompt_text, prompt_kind, is_synthetic))
    = max(hash(prompt_id, session_guid, user_id, surface, prompted_at, prompt_text, prompt_kind, is_synthetic));

create or replace temp table ref_actions as
with
typed as (
    select
        action_id, session_guid, prompt_id,
        cast(ts as timestamp) as acted_at,
        lower(trim(actor)) as actor,
        lower(trim(action_type)) as action_type,
        consumed_asset_id, source_retrieval_id, document_id,
        true as parses
    from read_parquet('{raw}/actions/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        action_id, session_guid, prompt_id,
        ref_ts(ts),
        lower(trim(actor)),
        lower(trim(action_type)),
        consumed_asset_id, source_retrieval_id, document_id,
        ref_parses(ts, ref_ts(ts))
    from read_json(
        ['/dev/null', '{raw}/actions/dt=*/*.jsonl', '{raw}/actions/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {
            action_id: 'VARCHAR', session_guid: 'VARCHAR', prompt_id: 'VARCHAR', ts: 'VARCHAR',
            actor: 'VARCHAR', action_type: 'VARCHAR', consumed_asset_id: 'VARCHAR',
            source_retrieval_id: 'VARCHAR', document_id: 'VARCHAR'
        }
    )
),
valid as (
    select *
    from typed
    where
        parses
        and action_id is not null and session_guid is not null and acted_at is not null
        and actor is not null and action_type is not null
        and ref_id_ok(action_id) and ref_id_ok(session_guid) and ref_id_ok(prompt_id)
        and ref_id_ok(consumed_asset_id) and ref_id_ok(source_retrieval_id) and ref_id_ok(document_id)
        and actor in ('user', 'agent')
        and action_type in (
            'click', 'select', 'place', 'edit', 'follow_up', 'export', 'share', 'download', 'reject_result'
        )
),
repeated as (
    select action_id
    from typed
    group by action_id
    having count(*) > 1
)
select
    action_id, session_guid, prompt_id, acted_at, actor, action_type, consumed_asset_id,
    source_retrieval_id, document_id
from valid
anti join repeated using (action_id)
union all
select
    action_id,
    any_value(session_guid),
    any_value(prompt_id),
    any_value(acted_at),
    any_value(actor),
    any_value(action_type),
    any_value(consumed_asset_id),
    any_value(source_retrieval_id),
    any_value(document_id)
from valid
semi join repeated using (action_id)
group by action_id
having
    min(hash(
        action_id, session_guid, prompt_id, acted_at, actor, action_type, consumed_asset_id,
        source_retrieval_id, document_id
    ))
    = max(hash(
        action_id, session_guid, prompt_id, acted_at, actor, action_type, consumed_asset_id,
        source_retrieval_id, document_id
    ));

-- Resolved relevance grade per (retrieval, asset): human over LLM, latest,
-- then the higher grade (the key is retrieval, asset, judge, judged_at).
create or replace temp table ref_labels as
with
typed as (
    select
        retrieval_id, asset_id, cast(grade as bigint) as grade, lower(trim(judge)) as judge,
        cast(judged_at as timestamp) as judged_at,
        true as parses
    from read_parquet('{raw}/relevance_labels/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        retrieval_id, asset_id, ref_int(grade), lower(trim(judge)), ref_ts(judged_at),
        ref_parses(grade, ref_int(grade)) and ref_parses(judged_at, ref_ts(judged_at))
    from read_json(
        ['/dev/null', '{raw}/relevance_labels/dt=*/*.jsonl', '{raw}/relevance_labels/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {
            retrieval_id: 'VARCHAR', asset_id: 'VARCHAR', grade: 'VARCHAR', judge: 'VARCHAR',
            judged_at: 'VARCHAR'
        }
    )
),
judgements as (
    select retrieval_id, asset_id, judge, judged_at, min(grade) as grade
    from typed
    where
        parses
        and retrieval_id is not null and asset_id is not null and grade is not null
        and judge is not null and judged_at is not null
        and ref_id_ok(retrieval_id) and ref_id_ok(asset_id)
        and judge in ('human', 'llm')
        and grade between 0 and 3
    group by retrieval_id, asset_id, judge, judged_at
    having min(grade) = max(grade)
)
select
    retrieval_id,
    asset_id,
    arg_max(grade, (judge = 'human', judged_at, grade)) as grade
from judgements
group by retrieval_id, asset_id;

-- Resolved Tier 0 and goal labels per prompt: human over LLM, latest.
create or replace temp table ref_prompt_labels as
with
typed as (
    select
        prompt_id, has_retrieval_intent, cast(retrieval_intent_count as bigint) as retrieval_intent_count,
        lower(trim(judge)) as judge, cast(judged_at as timestamp) as judged_at,
        true as parses
    from read_parquet('{raw}/prompt_labels/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        prompt_id, ref_bool(has_retrieval_intent), ref_int(retrieval_intent_count),
        lower(trim(judge)), ref_ts(judged_at),
        ref_parses(has_retrieval_intent, ref_bool(has_retrieval_intent))
        and ref_parses(retrieval_intent_count, ref_int(retrieval_intent_count))
        and ref_parses(judged_at, ref_ts(judged_at))
    from read_json(
        ['/dev/null', '{raw}/prompt_labels/dt=*/*.jsonl', '{raw}/prompt_labels/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {
            prompt_id: 'VARCHAR', has_retrieval_intent: 'VARCHAR', retrieval_intent_count: 'VARCHAR',
            judge: 'VARCHAR', judged_at: 'VARCHAR'
        }
    )
),
judgements as (
    select prompt_id, judge, judged_at, any_value(has_retrieval_intent) as has_retrieval_intent
    from typed
    where
        parses
        and prompt_id is not null and has_retrieval_intent is not null
        and retrieval_intent_count is not null and judge is not null and judged_at is not null
        and ref_id_ok(prompt_id)
        and judge in ('human', 'llm')
        and retrieval_intent_count >= 0
    group by prompt_id, judge, judged_at
    having min(hash(has_retrieval_intent, retrieval_intent_count))
        = max(hash(has_retrieval_intent, retrieval_intent_count))
)
select prompt_id, arg_max(has_retrieval_intent, (judge = 'human', judged_at)) as has_retrieval_intent
from judgements
group by prompt_id;

create or replace temp table ref_goal_labels as
with
typed as (
    select
        prompt_id, goal_achieved, lower(trim(judge)) as judge, cast(judged_at as timestamp) as judged_at,
        true as parses
    from read_parquet('{raw}/goal_labels/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        prompt_id, ref_bool(goal_achieved), lower(trim(judge)), ref_ts(judged_at),
        ref_parses(goal_achieved, ref_bool(goal_achieved)) and ref_parses(judged_at, ref_ts(judged_at))
    from read_json(
        ['/dev/null', '{raw}/goal_labels/dt=*/*.jsonl', '{raw}/goal_labels/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {prompt_id: 'VARCHAR', goal_achieved: 'VARCHAR', judge: 'VARCHAR', judged_at: 'VARCHAR'}
    )
),
judgements as (
    select prompt_id, judge, judged_at, min(goal_achieved) as goal_achieved
    from typed
    where
        parses
        and prompt_id is not null and goal_achieved is not null and judge is not null
        and judged_at is not null
        and ref_id_ok(prompt_id)
        and judge in ('human', 'llm')
    group by prompt_id, judge, judged_at
    having min(goal_achieved) = max(goal_achieved)
)
select prompt_id, arg_max(goal_achieved, (judge = 'human', judged_at)) as goal_achieved
from judgements
group by prompt_id;

-- ---------------------------------------------------------------- scope

-- Every prompt with its scope and the rewrite rule (int_prompt_sequences):
-- a prompt is a rewrite when its kind says so or, its kind being null, when
-- it follows its session's previous prompt within the window with similar text.
create or replace temp table ref_prompt_scope as
with
sequenced as (
    select
        prompt_id,
        session_guid,
        surface,
        prompt_kind,
        prompt_text,
        prompted_at,
        is_synthetic,
        lag(prompt_text) over session_order as previous_text,
        lag(prompted_at) over session_order as previous_at,
        lag(prompt_id) over session_order as previous_id
    from ref_prompts
    -- metrics.md v2: synthetic scope is per prompt; in-scope prompts are
    -- sequenced among themselves
    window session_order as (partition by session_guid, is_synthetic order by prompted_at, prompt_id)
),
compared as (
    select
        *,
        prompt_kind is null
        and previous_id is not null
        and epoch(prompted_at) - epoch(previous_at) <= {rewrite_window_s} as needs_similarity
    from sequenced
),
tokenized as (
    select
        *,
        case when needs_similarity then ref_tokens(previous_text) end as previous_tokens,
        case when needs_similarity then ref_tokens(prompt_text) end as tokens
    from compared
)
select
    s.prompt_id,
    s.session_guid,
    s.surface,
    s.prompted_at,
    s.is_synthetic,
    case
        when s.prompt_kind is not null then s.prompt_kind = 'rewrite'
        when s.needs_similarity
            then coalesce(ref_jaccard(s.previous_tokens, s.tokens) >= {rewrite_similarity_min}, false)
        else false
    end as is_rewrite,
    coalesce(pl.has_retrieval_intent = false, false) as has_no_retrieval_intent,
    gl.prompt_id is not null as is_goal_labelled,
    gl.goal_achieved
from tokenized as s
left join ref_prompt_labels as pl on s.prompt_id = pl.prompt_id
left join ref_goal_labels as gl on s.prompt_id = gl.prompt_id;

-- A session is synthetic by itself when every prompt of it is (v2).
create or replace temp table ref_sessions as
select session_guid, bool_and(is_synthetic) as is_synthetic
from ref_prompt_scope
group by session_guid;

-- Every clean retrieval with its scope, list counts and its de-duplicated
-- returned list (first occurrences; an asset's rank is its position there, as
-- int_retrieval_assets ranks it); the raw lists are not kept. Clean rows as
-- for the tables above, with the repeated keys found on the ids alone. A
-- retrieval's own prompt always has a retrieval, so it is misrouted when its
-- prompt is labelled without retrieval intent.
create or replace temp table ref_retrieval_scope as
with
typed as (
    select
        retrieval_id, prompt_id, session_guid,
        cast(ts as timestamp) as retrieved_at,
        query_text,
        lower(trim(retrieval_role)) as retrieval_role,
        returned_asset_ids, displayed_asset_ids,
        true as parses
    from read_parquet('{raw}/retrievals/dt=*/*.parquet', union_by_name = true, hive_partitioning = false)
    union all
    select
        retrieval_id, prompt_id, session_guid,
        ref_ts(ts),
        query_text,
        lower(trim(retrieval_role)),
        ref_list(returned_asset_ids), ref_list(displayed_asset_ids),
        ref_parses(ts, ref_ts(ts))
        and ref_parses(returned_asset_ids, ref_list(returned_asset_ids))
        and ref_parses(displayed_asset_ids, ref_list(displayed_asset_ids))
    from read_json(
        ['/dev/null', '{raw}/retrievals/dt=*/*.jsonl', '{raw}/retrievals/dt=*/*.jsonl.gz'],
        format = 'newline_delimited', ignore_errors = true, allow_empty = true,
        hive_partitioning = false,
        columns = {
            retrieval_id: 'VARCHAR', prompt_id: 'VARCHAR', session_guid: 'VARCHAR', ts: 'VARCHAR',
            query_text: 'VARCHAR', retrieval_role: 'VARCHAR', returned_asset_ids: 'JSON',
            displayed_asset_ids: 'JSON'
        }
    )
),
valid as (
    select *
    from typed
    where
        parses
        and retrieval_id is not null and prompt_id is not null and session_guid is not null
        and retrieved_at is not null and returned_asset_ids is not null
        and ref_id_ok(retrieval_id) and ref_id_ok(prompt_id) and ref_id_ok(session_guid)
        and (
            retrieval_role is null
            or retrieval_role in ('find', 'browse', 'operate', 'generation_reference', 'task_step', 'context_dependent')
        )
        and ref_list_ok(returned_asset_ids) and ref_list_ok(displayed_asset_ids)
),
repeated as (
    select retrieval_id
    from typed
    group by retrieval_id
    having count(*) > 1
),
clean as (
    select
        retrieval_id, prompt_id, session_guid, retrieved_at, query_text, retrieval_role,
        returned_asset_ids, displayed_asset_ids
    from valid
    anti join repeated using (retrieval_id)
    union all
    select
        retrieval_id,
        any_value(prompt_id),
        any_value(session_guid),
        any_value(retrieved_at),
        any_value(query_text),
        any_value(retrieval_role),
        any_value(returned_asset_ids),
        any_value(displayed_asset_ids)
    from valid
    semi join repeated using (retrieval_id)
    group by retrieval_id
    having
        min(hash(
            retrieval_id, prompt_id, session_guid, retrieved_at, query_text, retrieval_role,
            returned_asset_ids, displayed_asset_ids
        ))
        = max(hash(
            retrieval_id, prompt_id, session_guid, retrieved_at, query_text, retrieval_role,
            returned_asset_ids, displayed_asset_ids
        ))
)
select
    r.retrieval_id,
    r.prompt_id,
    r.session_guid,
    r.retrieved_at,
    r.query_text,
    coalesce(r.retrieval_role, 'unknown') as retrieval_role,
    len(r.returned_asset_ids) as returned_count,
    len(r.displayed_asset_ids) as displayed_length,
    case
        when len(list_distinct(r.returned_asset_ids)) = len(r.returned_asset_ids) then r.returned_asset_ids
        else list_filter(r.returned_asset_ids, lambda a, i: list_position(r.returned_asset_ids, a) = i)
    end as assets,
    coalesce(p.surface, 'unknown') as surface,
    coalesce(p.surface in ('chat', 'editor_assistant'), false) as is_assistant_surface,
    case when p.prompt_id is not null then p.is_synthetic else coalesce(s.is_synthetic, false) end
        as is_synthetic,
    coalesce(p.has_no_retrieval_intent, false) as is_misrouted,
    coalesce(p.is_rewrite, false) as is_rewrite_prompt,
    p.is_goal_labelled,
    p.goal_achieved
from clean as r
left join ref_prompt_scope as p on r.prompt_id = p.prompt_id
left join ref_sessions as s on r.session_guid = s.session_guid;

-- ---------------------------------------------------------------- Tier 1

create or replace temp table ref_relevance as
with
labelled as (
    select
        retrieval_id,
        count(*) as judged_asset_count,
        list(grade order by grade desc) as grades_desc
    from ref_labels
    group by retrieval_id
),
top_k as (
    select
        r.retrieval_id,
        unnest(r.assets[1:{k}]) as asset_id,
        generate_subscripts(r.assets[1:{k}], 1) as asset_rank
    from ref_retrieval_scope as r
    semi join labelled as l on r.retrieval_id = l.retrieval_id
),
scored as (
    select
        t.retrieval_id,
        count(*) filter (where t.asset_rank <= 1 and l.grade >= {grade_min}) / 1.0 as precision_at_1,
        count(*) filter (where l.grade >= {grade_min}) / {k}.0 as precision_at_k,
        coalesce(sum(l.grade / log2(t.asset_rank + 1.0)) filter (where l.grade > 0), 0.0) as dcg_at_k,
        count(l.grade) as judged_in_top_k_count
    from top_k as t
    left join ref_labels as l on t.retrieval_id = l.retrieval_id and t.asset_id = l.asset_id
    group by t.retrieval_id
)
select
    l.retrieval_id,
    l.judged_asset_count,
    coalesce(s.precision_at_1, 0.0) as precision_at_1,
    coalesce(s.precision_at_k, 0.0) as precision_at_k,
    coalesce(s.dcg_at_k, 0.0) as dcg_at_k,
    list_sum(list_transform(
        l.grades_desc[1:{k}], lambda g, i: case when g > 0 then g / log2(i + 1.0) else 0.0 end
    )) as ideal_dcg_at_k,
    s.judged_in_top_k_count
from labelled as l
left join scored as s on l.retrieval_id = s.retrieval_id;

-- ---------------------------------------------------------------- attribution

-- Every action with its scope, its direct source (rule 1) and, for actions
-- with a document and an asset, the source inherited from the latest earlier
-- place of that asset in that document (rule 2, chained).
create or replace temp table ref_action_sources as
with
direct as (
    select
        a.*,
        a.action_type in ('export', 'share', 'download') as is_outcome_type,
        p.prompt_id is not null as has_known_prompt,
        -- v2 scope: the prompt's flag; without a known prompt, the session's
        -- (all prompts synthetic) or the source retrieval's
        case
            when p.prompt_id is not null then p.is_synthetic
            else coalesce(s.is_synthetic, false) or coalesce(r.is_synthetic, false)
        end as is_synthetic,
        r.retrieval_id as direct_retrieval_id
    from ref_actions as a
    left join ref_prompt_scope as p on a.prompt_id = p.prompt_id
    left join ref_sessions as s on a.session_guid = s.session_guid
    left join ref_retrieval_scope as r on a.source_retrieval_id = r.retrieval_id
),
-- Rule 4 for every action with an asset (places included: v2 placement
-- inherits a place that rule 4 resolved).
temporal as (
    select
        a.action_id,
        arg_max(r.retrieval_id, (r.retrieved_at, r.retrieval_id)) as temporal_retrieval_id
    from direct as a
    inner join ref_retrieval_scope as r
        on
            a.session_guid = r.session_guid
            and r.retrieved_at <= a.acted_at
            and list_contains(r.assets, a.consumed_asset_id)
    where a.consumed_asset_id is not null
    group by a.action_id
),
placements as (
    select
        d.action_id,
        last_value(case when d.action_type = 'place' then d.direct_retrieval_id end ignore nulls) over w
            as inherited_direct_id,
        first_value(case when d.action_type = 'place' then t.temporal_retrieval_id end ignore nulls) over w
            as inherited_temporal_id
    from direct as d
    left join temporal as t on d.action_id = t.action_id
    where d.document_id is not null and d.consumed_asset_id is not null
    window w as (
        partition by d.document_id, d.consumed_asset_id
        order by d.acted_at, case when d.action_type = 'place' then 0 else 1 end, d.action_id
        rows between unbounded preceding and 1 preceding
    )
)
select
    d.*,
    t.temporal_retrieval_id,
    coalesce(p.inherited_direct_id, p.inherited_temporal_id) as placement_retrieval_id,
    p.inherited_direct_id is not null as is_direct_rooted,
    coalesce(d.direct_retrieval_id, p.inherited_direct_id, p.inherited_temporal_id) as lineage_retrieval_id
from direct as d
left join temporal as t on d.action_id = t.action_id
left join placements as p on d.action_id = p.action_id;

-- (action, credited retrieval) pairs by the first rule that resolves the
-- action: direct, placement, document (rule 3: every retrieval placed into
-- the document at or before an export / share / download without asset or
-- lineage), temporal (rule 4: the latest retrieval of the session at or
-- before the action that returned the asset).
create or replace temp table ref_credits as
with
-- rule 3 credits lineage-backed places only (a source id, or a placement
-- chain rooted in one)
document_placements as (
    select
        document_id,
        coalesce(direct_retrieval_id, case when is_direct_rooted then placement_retrieval_id end)
            as retrieval_id,
        min(acted_at) as first_placed_at
    from ref_action_sources
    where
        action_type = 'place' and document_id is not null
        and coalesce(direct_retrieval_id, case when is_direct_rooted then placement_retrieval_id end)
        is not null
    group by all
),
document_credits as (
    select a.action_id, dp.retrieval_id
    from ref_action_sources as a
    inner join document_placements as dp
        on a.document_id = dp.document_id and dp.first_placed_at <= a.acted_at
    where a.is_outcome_type and a.consumed_asset_id is null and a.lineage_retrieval_id is null
),
document_credited as (
    select distinct action_id
    from document_credits
),
resolved as (
    select
        a.action_id,
        coalesce(a.lineage_retrieval_id, a.temporal_retrieval_id) as single_retrieval_id,
        case
            when a.direct_retrieval_id is not null then 'direct'
            when a.placement_retrieval_id is not null then 'placement'
            when dc.action_id is not null then 'document'
            when a.temporal_retrieval_id is not null then 'temporal'
        end as attribution_method
    from ref_action_sources as a
    left join document_credited as dc on a.action_id = dc.action_id
)
select
    action_id,
    single_retrieval_id as retrieval_id,
    attribution_method,
    attribution_method <> 'temporal' as is_lineage_method
from resolved
where attribution_method in ('direct', 'placement', 'temporal')
union all
select action_id, retrieval_id, 'document', true
from document_credits;

-- ---------------------------------------------------------------- Tier 2 / 3

-- Evidence from the attributions of non-synthetic actions, per retrieval.
create or replace temp table ref_evidence as
select
    c.retrieval_id,
    min(a.acted_at) filter (
        where a.actor = 'user'
        and a.action_type in ('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')
    ) as first_genuine_positive_at,
    min(a.acted_at) filter (
        where a.actor = 'agent'
        and a.action_type <> 'reject_result'
        and a.prompt_id = r.prompt_id
        and list_contains(r.assets, a.consumed_asset_id)
    ) as first_agent_consumption_at,
    coalesce(bool_or(a.actor = 'user' and a.action_type = 'reject_result'), false) as has_attributed_reject,
    coalesce(bool_or(
        a.actor = 'user' and a.action_type = 'edit' and list_contains(r.assets, a.consumed_asset_id)
    ), false) as has_user_asset_edit,
    count(*) filter (where a.actor = 'user' and a.action_type = 'click') as click_count,
    count(*) filter (where a.actor = 'user' and a.is_outcome_type and c.is_lineage_method)
        as retrieval_driven_outcome_count,
    count(*) filter (
        where a.actor = 'user' and a.is_outcome_type and c.is_lineage_method
        and a.session_guid <> r.session_guid
    ) as cross_session_outcome_count
from ref_credits as c
inner join ref_action_sources as a on c.action_id = a.action_id
inner join ref_retrieval_scope as r on c.retrieval_id = r.retrieval_id
where not a.is_synthetic
group by c.retrieval_id;

create or replace temp table ref_signals as
with
evidence as (
    select
        r.retrieval_id,
        r.prompt_id,
        r.session_guid,
        r.retrieved_at,
        r.query_text,
        e.first_genuine_positive_at,
        e.first_agent_consumption_at,
        least(e.first_genuine_positive_at, e.first_agent_consumption_at) as first_use_evidence_at,
        coalesce(e.has_attributed_reject, false) as has_attributed_reject,
        coalesce(e.has_user_asset_edit, false) as has_user_asset_edit,
        coalesce(e.click_count, 0) as click_count,
        coalesce(e.retrieval_driven_outcome_count, 0) as retrieval_driven_outcome_count,
        coalesce(e.cross_session_outcome_count, 0) as cross_session_outcome_count
    from ref_retrieval_scope as r
    left join ref_evidence as e on r.retrieval_id = e.retrieval_id
    where not r.is_synthetic
),
-- ORF (a): a user reject of a prompt, attributed to no retrieval, fails the
-- prompt's latest retrieval at or before it.
prompt_rejects as (
    select distinct retrieval_id
    from (
        select arg_max(r.retrieval_id, (r.retrieved_at, r.retrieval_id)) as retrieval_id
        from ref_action_sources as a
        inner join ref_retrieval_scope as r
            on a.prompt_id = r.prompt_id and r.retrieved_at <= a.acted_at
        where
            not a.is_synthetic
            and a.actor = 'user' and a.action_type = 'reject_result'
            and a.action_id not in (select action_id from ref_credits)
        group by a.action_id
    )
),
-- ORF (c): an agent place / edit, in the prompt at or after a find / operate
-- retrieval, of an asset that retrieval did not return.
substitutions as (
    select distinct r.retrieval_id
    from ref_action_sources as a
    inner join ref_retrieval_scope as r
        on a.prompt_id = r.prompt_id and r.retrieved_at <= a.acted_at
    where
        not a.is_synthetic
        and a.actor = 'agent' and a.action_type in ('place', 'edit')
        and a.consumed_asset_id is not null
        and r.retrieval_role in {substitution_roles}
        and not list_contains(r.assets, a.consumed_asset_id)
),
-- ORF (b): a later retrieval of the session within the window, on a rewrite
-- (of another prompt) or with a similar query, before any use evidence.
research_pairs as (
    select
        e.retrieval_id,
        l.is_rewrite_prompt and l.prompt_id <> e.prompt_id as is_rewrite_pair,
        e.query_text,
        l.query_text as later_query_text
    from evidence as e
    inner join ref_retrieval_scope as l
        on
            e.session_guid = l.session_guid
            and not l.is_synthetic
            and e.retrieved_at < l.retrieved_at
            and epoch(l.retrieved_at) - epoch(e.retrieved_at) <= {research_window_s}
    where e.first_use_evidence_at is null or e.first_use_evidence_at >= l.retrieved_at
),
research_pairs_tokenized as (
    select
        retrieval_id,
        is_rewrite_pair,
        case when not is_rewrite_pair then ref_tokens(query_text) end as tokens,
        case when not is_rewrite_pair then ref_tokens(later_query_text) end as later_tokens
    from research_pairs
),
researches as (
    select distinct retrieval_id
    from research_pairs_tokenized
    where
        is_rewrite_pair
        or coalesce(ref_jaccard(tokens, later_tokens) >= {research_similarity_min}, false)
),
-- Downstream correction: the session's first prompt after the first use
-- evidence is a rewrite.
rewrites_after_evidence as (
    select e.retrieval_id
    from evidence as e
    inner join ref_prompt_scope as p
        on e.session_guid = p.session_guid and e.first_use_evidence_at < p.prompted_at
    where not p.is_synthetic
    group by e.retrieval_id
    having arg_min(p.is_rewrite, (p.prompted_at, p.prompt_id))
)
select
    e.*,
    e.has_attributed_reject or pr.retrieval_id is not null as has_reject_failure,
    rs.retrieval_id is not null as has_research_failure,
    su.retrieval_id is not null as has_substitution_failure,
    rw.retrieval_id is not null as has_rewrite_after_evidence
from evidence as e
left join prompt_rejects as pr on e.retrieval_id = pr.retrieval_id
left join researches as rs on e.retrieval_id = rs.retrieval_id
left join substitutions as su on e.retrieval_id = su.retrieval_id
left join rewrites_after_evidence as rw on e.retrieval_id = rw.retrieval_id;

-- Agent consumption confirmed (metrics.md v2): after the first agent
-- consumption of an asset (the ACR evidence), a user action of a GPR type on
-- that asset in the retrieval's session or credited to it by lineage, or a
-- document-level outcome credited to it by rule 3.
create or replace temp table ref_confirmations as
with
consumptions as (
    select c.retrieval_id, r.session_guid, a.consumed_asset_id, min(a.acted_at) as first_consumed_at
    from ref_credits as c
    inner join ref_action_sources as a on c.action_id = a.action_id
    inner join ref_retrieval_scope as r on c.retrieval_id = r.retrieval_id
    where
        not a.is_synthetic
        and a.actor = 'agent' and a.action_type <> 'reject_result'
        and a.prompt_id = r.prompt_id
        and list_contains(r.assets, a.consumed_asset_id)
    group by all
),
confirming as (
    select k.retrieval_id
    from consumptions as k
    inner join ref_action_sources as u
        on
            u.session_guid = k.session_guid
            and u.consumed_asset_id = k.consumed_asset_id
            and u.acted_at > k.first_consumed_at
    where
        not u.is_synthetic and u.actor = 'user'
        and u.action_type in ('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')
    union all
    select k.retrieval_id
    from consumptions as k
    inner join ref_credits as c on k.retrieval_id = c.retrieval_id
    inner join ref_action_sources as u on c.action_id = u.action_id
    where
        not u.is_synthetic and u.actor = 'user' and u.acted_at > k.first_consumed_at
        and (
            c.attribution_method = 'document'
            or (
                c.is_lineage_method
                and u.consumed_asset_id = k.consumed_asset_id
                and u.action_type in ('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')
            )
        )
)
select distinct retrieval_id
from confirming;

-- ---------------------------------------------------------------- the mart

create or replace table ref_fct_retrievals as
select
    r.retrieval_id,
    r.prompt_id,
    r.session_guid,
    (select sha256('{user_id_salt}|' || p.user_id) from ref_prompts as p where p.prompt_id = r.prompt_id)
        as user_key,
    r.surface,
    r.is_assistant_surface,
    r.retrieval_role,
    r.retrieved_at,
    cast(r.retrieved_at as date) as retrieval_date,
    r.is_misrouted,
    not r.is_misrouted as is_in_tier_scope,
    r.returned_count,
    len(r.assets) as distinct_returned_count,
    r.returned_count = 0 as is_empty,
    coalesce(r.displayed_length, 0) as displayed_count,
    -- an empty displayed list is not displayed; only a missing one falls back
    coalesce(
        r.displayed_length > 0,
        r.surface = 'template_search' and r.returned_count > 0
    ) as is_displayed,
    rel.retrieval_id is not null as is_labelled,
    coalesce(rel.judged_asset_count, 0) as judged_asset_count,
    rel.precision_at_1,
    rel.precision_at_k,
    rel.dcg_at_k,
    rel.ideal_dcg_at_k,
    case
        when rel.retrieval_id is not null
            then case when rel.ideal_dcg_at_k > 0.0 then rel.dcg_at_k / rel.ideal_dcg_at_k else 0.0 end
    end as ndcg_at_k,
    case
        when rel.retrieval_id is not null and len(r.assets) > 0
            then cast(rel.judged_in_top_k_count as double) / least(len(r.assets), {k})
    end as label_coverage_at_k,
    ndcg_at_k >= {good_ndcg} as is_tier1_good,
    s.click_count,
    s.first_genuine_positive_at is not null as has_genuine_positive,
    s.first_genuine_positive_at,
    s.first_agent_consumption_at is not null as has_agent_consumption,
    conf.retrieval_id is not null as has_confirmed_agent_consumption,
    s.first_agent_consumption_at,
    s.first_use_evidence_at,
    s.has_reject_failure or s.has_research_failure or s.has_substitution_failure as has_observable_failure,
    s.has_reject_failure,
    s.has_research_failure,
    s.has_substitution_failure,
    not has_genuine_positive
    and not has_agent_consumption
    and not has_observable_failure as is_unobserved,
    s.has_rewrite_after_evidence or s.has_user_asset_edit as has_downstream_correction,
    s.retrieval_driven_outcome_count,
    s.cross_session_outcome_count,
    s.retrieval_driven_outcome_count > 0 as has_retrieval_driven_outcome,
    r.is_goal_labelled,
    r.goal_achieved,
    case
        when ndcg_at_k is null then null
        when has_observable_failure and ndcg_at_k >= {good_ndcg} then 'downstream_or_routing_issue'
        when has_observable_failure then 'retrieval_failure_visible'
        when (has_genuine_positive or has_agent_consumption) and ndcg_at_k >= {good_ndcg} then 'healthy'
        when has_genuine_positive or has_agent_consumption then 'masked_retrieval_failure'
        else 'unobserved'
    end as tier_diagnosis
from ref_retrieval_scope as r
inner join ref_signals as s on r.retrieval_id = s.retrieval_id
left join ref_relevance as rel on r.retrieval_id = rel.retrieval_id
left join ref_confirmations as conf on r.retrieval_id = conf.retrieval_id
where not r.is_synthetic;
