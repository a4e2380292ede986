{{ lara_stage_source('stage_spans') }}
