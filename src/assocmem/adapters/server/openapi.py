"""Writes the server's OpenAPI schema.

Run ``python -m assocmem.adapters.server.openapi docs/openapi.json``.

The committed schema is what clients and fuzzers read; a test keeps it equal to the app's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assocmem.adapters.server.api import create_app


def schema() -> dict[str, object]:
    """The OpenAPI schema of the server (no store is opened to make it)."""
    return create_app(":memory:").openapi()  # the store opens in the lifespan, never run here


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0] if args else "docs/openapi.json")
    target.write_text(json.dumps(schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
