{{ lara_reconciliation('retrievals') }}
