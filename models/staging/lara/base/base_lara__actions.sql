{{ lara_stage_source('actions') }}
