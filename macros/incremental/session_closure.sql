{#
    Which sessions a run recomputes: the sessions the newly loaded rows
    touch (lara_touched_sessions_select), closed over lineage both ways
    (lara_lineage_closure_select), and the label tables, whose rows touch
    only their own session (lara_label_tables, and which of them a model
    reads: lara_label_tables_read). The model lara_sessions_this_run runs
    them; the filters every session-grained model applies with its rows:
    sessions_this_run.sql. The run state as a whole: run_state.sql.
#}


{% macro lara_session_tables() %}
    {#- Base tables whose rows belong to a session, how each reaches it, and
        whether a newly loaded row changes other sessions' rows through lineage
        (prompts, actions, retrievals; prompt labels decide a retrieval's
        misroute flag, which attributions in other sessions carry) or only its
        own session's rows (the other labels, the Tier 0 sample design, stage spans). -#}
    {{ return({
        'prompts': {'reach': 'session', 'lineage': true},
        'actions': {'reach': 'session', 'lineage': true},
        'retrievals': {'reach': 'retrieval', 'lineage': true},
        'prompt_labels': {'reach': 'prompt', 'lineage': true},
        'goal_labels': {'reach': 'prompt', 'lineage': false},
        'relevance_labels': {'reach': 'label', 'lineage': false},
        'stage_spans': {'reach': 'prompt', 'lineage': false},
        'prompt_label_sample_design': {'reach': 'prompt', 'lineage': false},
    }) }}
{% endmacro %}


{% macro lara_touched_sessions_select(watermark) %}
    {#- select session_guid, table_name, is_lineage: the sessions of base rows
        (any status: a version quarantined today removes yesterday's row)
        loaded after `watermark`, and the table that touched them. A
        retrieval touches its own session and its prompt's. -#}
    {%- set parts = [] -%}
    {%- for table_name, spec in lara_session_tables().items() -%}
    {%- set loaded = ref('base_lara__' ~ table_name) -%}
    {%- set part -%}
        {%- if spec.reach == 'session' %}
        select session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }}
        where _lara_loaded_at > {{ watermark }}
        {%- elif spec.reach == 'retrieval' %}
        select session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }}
        where _lara_loaded_at > {{ watermark }}
        union all
        select prompts.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__prompts') }} as prompts on loaded.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- elif spec.reach == 'prompt' %}
        select prompts.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__prompts') }} as prompts on loaded.prompt_id = prompts.prompt_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- else %}
        select retrievals.session_guid, '{{ table_name }}' as table_name, {{ spec.lineage }} as is_lineage
        from {{ loaded }} as loaded
        inner join {{ ref('base_lara__retrievals') }} as retrievals
            on loaded.retrieval_id = retrievals.retrieval_id
        where loaded._lara_loaded_at > {{ watermark }}
        {%- endif %}
    {%- endset -%}
    {%- do parts.append(part) -%}
    {%- endfor %}
    {{ parts | join('\n        union all\n') }}
{% endmacro %}


{% macro lara_lineage_closure_select(touched) %}
    {#- select session_guid, reason: the sessions a run recomputes, from the
        relation `touched` (session_guid, table_name, is_lineage):
        1. the touched sessions themselves (reason `loaded`, or `label` when
           only a local table touched them);
        2. lineage, forwards and backwards: the actions of touched sessions,
           actions naming a retrieval or a prompt of a touched session, and
           every action in the documents those actions touched (placement
           chains and document credits live in a document);
        3. the sessions of those actions and of the retrievals they name,
           and of the retrievals naming a prompt of a touched session (a
           retrieval's user, surface and scope are its prompt's, which may
           be logged in another session); and the prompt sessions of the
           retrievals of touched sessions and of the retrievals those
           actions name (a prompt's row sums its retrievals' use evidence
           and outcomes, which a new action in the retrieval's session or
           naming it changes); and the sessions of the retrievals of the
           prompts that actions of touched sessions name, with those
           prompts' sessions (a reject or an agent action counts for the
           retrievals of its prompt) (reason `lineage`).
        A session gets the first reason that applies in the order `loaded`,
        `lineage`, `label`: `label` means that only label tables reached it,
        so models without those tables in their lineage may skip it
        (lara_recomputed_here); a session reached through lineage that also
        has a new label is recomputed by every model.
        Rows of every status count (a quarantined version still tells which
        session it came from). Each step is a semi-join of a base table on a
        small set, so the cost follows the touched rows. -#}
    with

    touched_lineage as (
        select distinct session_guid from {{ touched }}
        where is_lineage and session_guid is not null
    ),

    prompt_retrievals as (
        select retrievals.retrieval_id, retrievals.session_guid
        from {{ ref('base_lara__retrievals') }} as retrievals
        inner join {{ ref('base_lara__prompts') }} as prompts
            on retrievals.prompt_id = prompts.prompt_id
        where prompts.session_guid in (select session_guid from touched_lineage)
    ),

    touched_retrievals as (
        select retrieval_id from {{ ref('base_lara__retrievals') }}
        where session_guid in (select session_guid from touched_lineage)
        union
        select retrieval_id from prompt_retrievals
    ),

    touched_prompts as (
        select prompt_id from {{ ref('base_lara__prompts') }}
        where session_guid in (select session_guid from touched_lineage)
    ),

    linked_actions as (
        select session_guid, document_id, source_retrieval_id, prompt_id
        from {{ ref('base_lara__actions') }}
        where
            session_guid in (select session_guid from touched_lineage)
            or source_retrieval_id in (select retrieval_id from touched_retrievals)
            or prompt_id in (select prompt_id from touched_prompts)
    ),

    document_actions as (
        select session_guid, document_id, source_retrieval_id
        from {{ ref('base_lara__actions') }}
        where document_id in (
            select document_id from linked_actions where document_id is not null
        )
    ),

    lineage_actions as (
        select session_guid, document_id, source_retrieval_id from linked_actions
        union
        select * from document_actions
    ),

    {# Prompts the actions of touched sessions name, logged in any session:
       a reject or an agent action counts for the prompt's retrievals
       (int_retrieval_reject_failures, int_retrieval_substitution_failures),
       which may be in another session than the action. Those actions are
       among linked_actions (its first condition): read from there, not from
       the actions' history again (DuckDB hashed every action with a prompt
       to match them, 1.0 s at 120 days of 100k events). #}
    action_prompts as (
        select prompt_id from linked_actions
        where
            session_guid in (select session_guid from touched_lineage)
            and prompt_id is not null
    ),

    {# Retrievals whose use or outcomes a new row may change: those of
       touched sessions, those the lineage actions name and those of the
       prompts the touched sessions' actions name. #}
    used_retrievals as (
        select session_guid, prompt_id
        from {{ ref('base_lara__retrievals') }}
        where
            session_guid in (select session_guid from touched_lineage)
            or retrieval_id in (
                select source_retrieval_id from lineage_actions where source_retrieval_id is not null
            )
            or prompt_id in (select prompt_id from action_prompts)
    ),

    named_retrieval_sessions as (
        select session_guid from used_retrievals
        union
        select prompts.session_guid
        from used_retrievals
        inner join {{ ref('base_lara__prompts') }} as prompts
            on used_retrievals.prompt_id = prompts.prompt_id
    ),

    reasons as (
        select session_guid, case when is_lineage then 1 else 3 end as reason_order
        from {{ touched }}
        union all
        select session_guid, 2 as reason_order from lineage_actions
        union all
        select session_guid, 2 as reason_order from named_retrieval_sessions
        union all
        select session_guid, 2 as reason_order from prompt_retrievals
    )

    select
        session_guid,
        case min(reason_order) when 1 then 'loaded' when 2 then 'lineage' else 'label' end as reason
    from reasons
    where session_guid is not null
    group by session_guid
{% endmacro %}


{% macro lara_label_tables() %}
    {#- The session tables whose newly loaded rows change only their own
        session's rows (lara_session_tables without lineage): goal and
        relevance labels, stage spans, the Tier 0 sample design.
        lara_sessions_this_run and lara_days_this_run say, per session and
        per day, which of them touched it (`has_loaded_<table>`). -#}
    {%- set tables = [] -%}
    {%- for table_name, spec in lara_session_tables().items() if not spec.lineage -%}
        {%- do tables.append(table_name) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}


{% macro lara_label_tables_read(unique_id=none) %}
    {#- The label tables (lara_label_tables) in the lineage of a node (default:
        the model being built), from the DAG at execute time: a walk up
        `depends_on` that does not pass through the run_state models (they
        read every base table to find the sessions, not to compute rows).
        A session or day touched only by other label tables leaves the
        node's rows as they are, so the node does not recompute it. At parse
        time, or for a node not in the graph (a unit test), every label
        table: the conservative answer. -#}
    {%- set start = unique_id or (model.unique_id if model is defined and model is mapping else none) -%}
    {%- if not execute or start is none or start not in graph.nodes -%}
        {{ return(lara_label_tables()) }}
    {%- endif -%}
    {%- set seen = [start] -%}
    {#- The list grows while the loop runs over it: a breadth-first walk. -#}
    {%- for node_id in seen -%}
        {%- set node = graph.nodes.get(node_id) -%}
        {%- if node is not none and (node_id == start or node.fqn[1] != 'run_state') -%}
            {%- for parent in node.depends_on.nodes if parent not in seen -%}
                {%- do seen.append(parent) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set read = [] -%}
    {%- for table_name in lara_label_tables() -%}
        {%- if 'model.' ~ project_name ~ '.base_lara__' ~ table_name in seen -%}
            {%- do read.append(table_name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(read) }}
{% endmacro %}


{% macro lara_show_label_lineage() %}
    {#- run-operation: per incremental model of the project, the label tables
        in its lineage (lara_label_tables_read), one log line each as JSON:
        which models a session or day touched only by labels reaches. -#}
    {%- for node in (graph.nodes.values() | sort(attribute='name'))
        if node.resource_type == 'model' and node.package_name == project_name
        and node.config.materialized == 'incremental' -%}
        {%- do log('lara_label_lineage ' ~ tojson({'model': node.name,
            'strategy': node.config.incremental_strategy,
            'label_tables': lara_label_tables_read(node.unique_id)}), info=true) -%}
    {%- endfor -%}
{% endmacro %}
