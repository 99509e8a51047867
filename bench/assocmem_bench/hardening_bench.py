"""The hardening figures of the server and the store, from one command.

- server: real ``assocmem serve`` processes on 127.0.0.1 against idle, flooding and
  oversized clients (`hardening_server`);
- race: id-taking writes racing ``forget`` on each backend ``--backend`` names
  (`hardening_store.race`);
- wal: a SQLite reader's long snapshot against a stream of writes
  (`hardening_store.wal_under_snapshot`).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assocmem.progress import bar as progress_bar

from . import hardening_server, hardening_store
from .measure import environment
from .stores import open_stores

PARTS = ("server", "race", "wal")
# The defaults of the CLI: rounds per raced operation (enough that each interleaving of
# the two sides shows up many times), and seconds of each flood and of the WAL part.
ROUNDS = 150
SECONDS = 30.0


def _say(text: str) -> None:
    print(f"hardening: {text}", file=sys.stderr)


def run(
    out: str,
    *,
    dbs: Sequence[str] = ("sqlite", "postgres"),
    rounds: int = ROUNDS,
    seconds: float = SECONDS,
    parts: Sequence[str] = PARTS,
) -> dict[str, Any]:
    """Measure the chosen ``parts`` and write the JSON report to ``out``."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit(f"--only takes {', '.join(PARTS)}, not {', '.join(unknown)}")
    report: dict[str, Any] = {
        "benchmark": "hardening",
        "environment": environment(sqlite=sqlite3.sqlite_version),
        "config": {"parts": [p for p in PARTS if p in parts], "rounds": rounds,
                   "seconds": seconds, "db": list(dbs)},
    }  # fmt: skip
    steps = len(hardening_server.PROBES) * ("server" in parts)
    steps += len(dbs) * rounds * len(hardening_store.OPERATIONS) * ("race" in parts)
    steps += "wal" in parts
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-hardening-") as folder,
        progress_bar(steps, desc="hardening bench", unit="step") as bar,
    ):
        if "server" in parts:
            _say("server probes on 127.0.0.1…")
            report["server"] = hardening_server.run_probes(
                Path(folder), seconds, lambda name: bar.update(1)
            )
        if "race" in parts:
            report["race"] = _races(dbs, rounds, lambda: bar.update(1))
        if "wal" in parts:
            _say(f"writes for {seconds:g}s under a held SQLite snapshot…")
            report["wal"] = hardening_store.wal_under_snapshot(Path(folder), seconds)
            bar.update(1)
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _races(dbs: Sequence[str], rounds: int, tick: Callable[[], object]) -> dict[str, Any]:
    """The race part on each backend, keyed by backend, each with its version."""
    results = {}
    for db in dbs:
        with open_stores(db) as stores:
            _say(f"{rounds} rounds of each operation racing forget on {stores.backend}…")
            results[stores.backend] = {
                "environment": stores.describe(),
                **hardening_store.race(stores, rounds, tick),
            }
    return results


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The report without its environment and the race's per-operation detail."""
    brief = {key: value for key, value in report.items() if key != "environment"}
    if "race" in report:
        brief["race"] = {
            backend: {k: v for k, v in result.items() if k != "operations"}
            for backend, result in report["race"].items()
        }
    return brief
