{{ lara_reconciliation('replay_documents') }}
