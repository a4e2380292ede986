{#- lara_resolved_labels(labels, subjects, subject_id, label_columns,
    keys=[subject_id], tie_breakers=[]): the rest of a *_labels_resolved
    model after its `sessions_this_run` CTE (lara_sessions_this_run_cte):
    CTEs `subjects`, `labels`, `ranked` and `resolved`, then the stamped
    rows of `resolved` (lara_stamp_rows). The one resolution rule every
    labels model uses: per key, a human judgement wins over an LLM one, the
    latest wins within a kind, then `tie_breakers` (ORDER BY terms) keep
    the choice deterministic.

    - labels: the staged labels model (ref name), holding `subject_id`, the
      `keys`, `label_columns`, judge and judged_at.
    - subjects: the staged model of the labelled things (ref name), holding
      `subject_id` and session_guid.
    - keys: what one resolved label is per (default: the subject).

    Labels of logged subjects only (a label whose subject is not, or not
    yet, logged is resolved once the subject arrives: its session is then
    recomputed). Session-grained and incremental (strategy
    lara_replace_sessions, the subject's session): a run recomputes the
    subjects of lara_sessions_this_run, which holds every session with a
    newly loaded label.

    Output columns: the keys, the label columns, judge, judged_at,
    judgement_count (the judgements of the key), session_guid (the
    subject's) and the bookkeeping columns of lara_stamp_rows. -#}
{% macro lara_resolved_labels(labels, subjects, subject_id, label_columns, keys=none, tie_breakers=[]) %}
    {%- set keys = keys if keys is not none else [subject_id] -%}
    {%- set resolved_columns = keys + label_columns + ['judge', 'judged_at'] -%}
subjects as (

    select
        {{ subject_id }},
        session_guid
    from {{ ref(subjects) }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

labels as (

    select labelled.* from {{ ref(labels) }} as labelled
    where labelled.{{ subject_id }} in (select subjects.{{ subject_id }} from subjects)

),

ranked as (

    select
        {%- for column in resolved_columns %}
        {{ column }},
        {%- endfor %}
        row_number() over (
            partition by {{ keys | join(', ') }}
            order by
                case when judge = 'human' then 0 else 1 end,
                judged_at desc
                {%- for term in tie_breakers %},
                {{ term }}
                {%- endfor %}
        ) as judgement_rank,
        count(*) over (partition by {{ keys | join(', ') }}) as judgement_count
    from labels

),

resolved as (

    select
        {%- for column in resolved_columns %}
        ranked.{{ column }},
        {%- endfor %}
        ranked.judgement_count,
        subjects.session_guid
    from ranked
    inner join subjects
        on ranked.{{ subject_id }} = subjects.{{ subject_id }}
    where ranked.judgement_rank = 1

)

{{ lara_stamp_rows('resolved') }}
{%- endmacro %}
