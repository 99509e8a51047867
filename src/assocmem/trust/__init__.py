"""The trust room: standing earned from outcomes and independent sources."""
