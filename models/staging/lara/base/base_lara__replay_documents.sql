{{ lara_stage_source('replay_documents') }}
