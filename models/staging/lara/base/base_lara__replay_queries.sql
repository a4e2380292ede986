{{ lara_stage_source('replay_queries') }}
