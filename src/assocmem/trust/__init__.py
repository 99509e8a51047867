"""The trust room: standing earned from outcomes and independent sources, and the
attribution it stands on (receipts, monitor, budgets, grades, convergence)."""
