{{ lara_reconciliation('prompt_label_sample_design') }}
