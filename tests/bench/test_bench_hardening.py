"""The hardening benchmark runs end to end, shrunk, and its figures hold their bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from assocmem_bench.hardening_server import PROBES
from assocmem_bench.hardening_store import OPERATIONS

from assocmem.adapters.cli import main


@pytest.mark.slow
def test_the_server_and_wal_parts_write_their_figures(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    out = tmp_path / "hardening.json"
    argv = ["bench", "hardening", "--only", "server,wal", "--seconds", "2", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads(out.read_text())
    assert set(report) == {"benchmark", "environment", "config", "server", "wal", "run"}
    server = report["server"]
    assert set(server) == set(PROBES) and all(r["measured"] for r in server.values())
    assert server["idle_connections"]["still_open"] == 0
    flood = server["idle_flood"]
    assert flood["keyed_served"] == flood["keyed_calls"]
    refusals = server["refusal_flood"]
    assert refusals["refused_401"] == refusals["unauthenticated_sent"] > 0
    assert refusals["keyed_served"] == refusals["keyed_calls"] > 0
    assert server["unauthenticated_bodies"]["statuses"] == {"401": 2}
    oversized = server["oversized_bodies"]
    assert oversized["answered_413"] == oversized["sent"] == 15
    wal = report["wal"]
    assert wal["batches_written"] > 0 and wal["reader_view_unchanged"]
    assert wal["wal_shrunk_after_s"] is not None
    assert wal["wal_after_release_bytes"] <= wal["wal_limit_bytes"]


def test_the_race_part_counts_no_untyped_error_leftover_or_resurrection(
    db: str, tmp_path: Path
) -> None:
    out = tmp_path / "race.json"
    argv = ["bench", "hardening", "--only", "race", "--rounds", "3", "--backend", db,
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (result,) = json.loads(out.read_text())["race"].values()
    assert set(result["operations"]) == set(OPERATIONS)
    assert result["races"] == 3 * len(OPERATIONS)
    assert (result["untyped_errors"], result["leftover_rows"], result["resurrected"]) == (0, 0, 0)


def test_an_unknown_part_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--only takes"):
        main(["bench", "hardening", "--only", "disk", "--out", str(tmp_path / "x.json")])
