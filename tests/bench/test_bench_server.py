"""The server benchmark runs end to end, shrunk (the 60-second run is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("schemathesis")
server_bench = pytest.importorskip("assocmem_bench.server_bench")


@pytest.mark.slow
def test_server_benchmark_smoke(tmp_path: Path) -> None:
    out = tmp_path / "server.json"
    server_bench.run(str(out), clients=2, seconds=2.0, examples=1)
    report = json.loads(out.read_text())
    assert report["load"]["writes_acknowledged"] > 0
    assert report["load"]["acknowledged_writes_missing"] == 0
    assert report["load"]["clients_with_wrong_weight"] == 0
    assert report["crash"]["integrity_check"] == "ok"
    assert report["fuzz"]["server_errors_5xx"] == 0 and report["fuzz"]["server_still_running"]
    assert report["environment"]["sqlite"]
