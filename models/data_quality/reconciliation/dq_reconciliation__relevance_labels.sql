{{ lara_reconciliation('relevance_labels') }}
