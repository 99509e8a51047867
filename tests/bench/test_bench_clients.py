"""The clients benchmark runs end to end, shrunk: every transport served every caller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assocmem.adapters.cli import main


@pytest.mark.slow
def test_every_transport_serves_its_callers_and_is_compared(tmp_path: Path) -> None:
    for needed in ("fastapi", "uvicorn", "mcp", "httpx"):
        pytest.importorskip(needed)
    from assocmem_bench.clients_bench import TRANSPORTS, WORKLOADS

    out = tmp_path / "clients.json"
    argv = ["bench", "clients", "--clients", "2", "--seconds", "0.5", "--rounds", "1",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(out.read_text())
    assert set(report["transports"]) == set(report["against_urllib"]) == set(WORKLOADS)
    for workload, transports in report["transports"].items():
        assert set(transports) == set(TRANSPORTS)
        for name, figures in transports.items():
            assert figures["calls"] > 0 and figures["errors"] == 0, (workload, name)
            assert 0 < figures["p50_ms"] <= figures["p95_ms"], (workload, name)
        assert set(report["against_urllib"][workload]) == set(TRANSPORTS) - {"urllib"}
