{{ lara_stage_source('prompts') }}
