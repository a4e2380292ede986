{{ lara_reconciliation('label_sample_design') }}
