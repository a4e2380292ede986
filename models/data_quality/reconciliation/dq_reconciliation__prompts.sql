{{ lara_reconciliation('prompts') }}
