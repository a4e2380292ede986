{{ lara_stage_source('document_entities') }}
