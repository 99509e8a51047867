"""Consolidation: the dream pass (hubs, near-duplicates, the state-toggle guard, the
keep-budget), cluster-triggered consolidation and value by cohort."""
