{{ lara_stage_source('prompt_label_sample_design') }}
