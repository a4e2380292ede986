{{ lara_stage_source('goal_labels') }}
