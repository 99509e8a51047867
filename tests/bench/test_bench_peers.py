"""The peers benchmark runs each installed peer beside assocmem, shrunk; a missing peer is
skipped with the reason the report gives."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

peers = pytest.importorskip("assocmem_bench.peers")

# A peer that cannot share this environment (cpersona pins mcp<2) is found through
# ASSOCMEM_PEER_PYTHONS="cpersona=/its/venv/bin/python", as `--peer-python` gives it.
PYTHONS = dict(
    pair.split("=", 1) for pair in os.environ.get("ASSOCMEM_PEER_PYTHONS", "").split(",") if pair
)


@pytest.mark.slow
@pytest.mark.parametrize("peer", list(peers.PEERS))
def test_each_installed_peer_runs_beside_assocmem(peer: str, tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    report = peers.run(str(out), size=100, rounds=1, peers=[peer], pythons=PYTHONS, queries=10)
    assert json.loads(out.read_text()) == report
    result = report["peers"][peer]
    if result.get("skipped", "").startswith("not installed"):
        pytest.skip(result["skipped"])
    assert "skipped" not in result, result.get("skipped")
    for side in ("assocmem", "peer"):
        (run,) = result[side]["rounds"]
        assert run["writes_per_s"] > 0 and 0 < run["p50_ms"] <= run["p95_ms"]
        assert run["disk_bytes_per_memory"] > 0 and run["mean_returned"] > 0
        assert result[side]["median"]["writes_per_s"] == pytest.approx(run["writes_per_s"], 1e-3)
    assert result["peer"]["version"]
    assert set(result["ratio_assocmem_over_peer"]) == {
        "writes_per_s", "p50_ms", "p95_ms", "disk_bytes_per_memory"
    }  # fmt: skip
    assert all(ratio > 0 for ratio in result["ratio_assocmem_over_peer"].values())
    _, line = peers.lines(report)
    assert line.startswith(peer) and "x)" in line


def test_a_peer_that_cannot_run_is_skipped_with_the_reason(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-python")
    report = peers.run(
        str(tmp_path / "p.json"), size=10, rounds=1, peers=["hebbmem"],
        pythons={"hebbmem": missing}, queries=2,
    )  # fmt: skip
    assert missing in report["peers"]["hebbmem"]["skipped"]
    _, line = peers.lines(report)
    assert "skipped" in line


def test_an_unknown_peer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown peers: nobody"):
        peers.run(str(tmp_path / "p.json"), size=10, peers=["nobody"])
