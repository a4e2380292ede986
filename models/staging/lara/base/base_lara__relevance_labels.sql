{{ lara_stage_source('relevance_labels') }}
