{{ lara_stage_source('label_sample_design') }}
