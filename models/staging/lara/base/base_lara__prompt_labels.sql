{{ lara_stage_source('prompt_labels') }}
