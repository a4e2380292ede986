{{ lara_reconciliation('document_entities') }}
