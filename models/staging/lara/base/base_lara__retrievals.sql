{{ lara_stage_source('retrievals') }}
