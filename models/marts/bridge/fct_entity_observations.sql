{#- One row per distinct (trajectory, step, entity) for the observable entity
    relevance (OER) mechanism: entities of the documents read at step t of a
    trajectory that has a query at t + 1, whether the entity is
    discriminative (among the documents read at t it occurs only in relevant
    ones) and whether it appears in the query at t + 1. Recomputed whole, on
    runs that loaded one of the three replay tables only. -#}
{%- set replay_tables = ['replay_documents', 'replay_queries', 'document_entities'] -%}
{{ lara_whole_table_config(replay_tables) }}

with

{{ lara_tables_this_run_cte(replay_tables) }}

replay_documents as (

    select * from {{ ref('stg_lara__replay_documents') }}
    where {{ lara_if_tables_loaded() }}

),

replay_queries as (

    select * from {{ ref('stg_lara__replay_queries') }}
    where {{ lara_if_tables_loaded() }}

),

document_entities as (

    select * from {{ ref('stg_lara__document_entities') }}
    where {{ lara_if_tables_loaded() }}

),

{# Entities compare trimmed and lower-cased; blank entities are dropped (an
    empty string would be a substring of every query). #}
normalised_entities as (

    select distinct
        doc_id,
        lower(trim(entity)) as entity
    from document_entities
    where trim(entity) <> ''

),

reads_before_a_query as (

    select
        replay_documents.trajectory_id,
        replay_documents.step_index,
        replay_documents.doc_id,
        replay_documents.is_relevant,
        lower(replay_queries.query_text) as next_query_text
    from replay_documents
    inner join replay_queries
        on
            replay_documents.trajectory_id = replay_queries.trajectory_id
            and replay_documents.step_index + 1 = replay_queries.step_index

),

entity_reads as (

    select
        reads_before_a_query.trajectory_id,
        reads_before_a_query.step_index,
        reads_before_a_query.doc_id,
        reads_before_a_query.is_relevant,
        reads_before_a_query.next_query_text,
        normalised_entities.entity
    from reads_before_a_query
    inner join normalised_entities
        on reads_before_a_query.doc_id = normalised_entities.doc_id

),

entity_steps as (

    select
        trajectory_id,
        step_index,
        entity,
        max(next_query_text) as next_query_text,
        count(*) as document_count,
        count(case when is_relevant then 1 end) as relevant_document_count
    from entity_reads
    group by
        trajectory_id,
        step_index,
        entity

),

final as (

    select
        -- ids
        trajectory_id,
        -- strings
        entity,
        -- numerics
        step_index,
        document_count,
        relevant_document_count,
        -- booleans
        relevant_document_count = document_count as is_discriminative,
        coalesce({{ lara_contains_text('next_query_text', 'entity') }}, false) as appears_in_next_query,
        -- bookkeeping
        {{ lara_run_started_at() }} as _lara_loaded_at
    from entity_steps

)

select * from final
