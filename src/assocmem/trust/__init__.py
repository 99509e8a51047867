"""The trust room: standing earned from outcomes and independent sources (issue 19)."""
