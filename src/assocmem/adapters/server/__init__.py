"""The HTTP server (FastAPI + uvicorn, the ``server`` extra) and its API keys."""

from __future__ import annotations

try:
    from assocmem.adapters.server.api import create_app
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from assocmem.errors import DependencyMissing

    raise DependencyMissing("the HTTP server needs `pip install assocmem[server]`") from exc

__all__ = ["create_app"]
