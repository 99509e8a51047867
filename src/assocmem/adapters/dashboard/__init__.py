"""The web dashboard: static files (HTML, script, style and the vendored libraries they
need, under `STATIC_DIR`) served by the HTTP server at ``/dashboard/``. The page calls
the same ``/v1`` routes as any client, with the same keys and roles.

Invariant: everything the page loads ships in this package, so it works offline and
makes no request beyond the server it came from.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).parent / "static"
