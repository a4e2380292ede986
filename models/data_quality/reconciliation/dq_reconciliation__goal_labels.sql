{{ lara_reconciliation('goal_labels') }}
