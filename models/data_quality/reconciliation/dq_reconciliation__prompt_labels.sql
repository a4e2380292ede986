{{ lara_reconciliation('prompt_labels') }}
