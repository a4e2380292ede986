{{ lara_reconciliation('replay_queries') }}
