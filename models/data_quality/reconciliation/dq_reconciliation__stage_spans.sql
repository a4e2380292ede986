{{ lara_reconciliation('stage_spans') }}
