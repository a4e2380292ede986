{{ lara_reconciliation('actions') }}
