"""The vault benchmark runs end to end on a tiny generated vault (the real run is 10,000 notes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

vault_bench = pytest.importorskip("assocmem_bench.vault_bench")


def test_the_generated_vault_is_deterministic(tmp_path: Path) -> None:
    first = vault_bench.generate(tmp_path / "a", 30, seed=3)
    second = vault_bench.generate(tmp_path / "b", 30, seed=3)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_vault_benchmark_smoke(tmp_path: Path) -> None:
    out = tmp_path / "vault.json"
    report = vault_bench.run(str(out), notes=200, queries=10)
    assert json.loads(out.read_text()) == report
    assert report["notes"] == 200 and report["chunks"] == 400
    assert report["reindex_unchanged_read"] == 0
    assert report["edited"] == 2 and report["reindex_edited_read"] == 2
    assert report["reindex_edited_changed"] == 2
    assert 0 < report["relevant_notes_ms"]["p50"] <= report["relevant_notes_ms"]["p95"]
