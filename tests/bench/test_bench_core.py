"""The core benchmark runs end to end, shrunk, on both backends (the real run is a benchmark)."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.testing import ToyEmbedder

core = pytest.importorskip("assocmem_bench.core")
stores = pytest.importorskip("assocmem_bench.stores")


def test_each_store_is_fresh_and_measured(db: str) -> None:
    with stores.open_stores(db) as handed:
        first, second = handed.new("a"), handed.new("a")
        assert first != second
        with Memory(first, agent_id="bench") as mem:
            mem.write("only in the first store", concepts=["first"])
        with Memory(second, agent_id="bench") as mem:
            assert mem.stats().memories == 0
        assert handed.size_mb(first) > 0
        assert handed.describe()["backend"] == ("sqlite" if db == "sqlite" else "postgresql")


@pytest.mark.slow
def test_core_benchmark_smoke(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in {"BATCH": 40, "ROUNDS": 2, "SINGLE_ROUNDS": 2, "SINGLE_WRITES": 10,
                        "READS": 20, "FEEDBACKS": 5, "FORGETS": 3}.items():  # fmt: skip
        monkeypatch.setattr(core, name, value)
    monkeypatch.setenv("ASSOCMEM_PROGRESS", "1")
    out = tmp_path / "core.json"
    core.run([200], str(out), db=db)
    report = json.loads(out.read_text())
    size = report["sizes"]["200"]
    # the fill, two rounds of batches, two of ten-times batches and two of single writes
    assert size["memories"] == 200 + core.written_on_top() == 200 + 2 * 40 + 2 * 400 + 2 * 10
    # the bar ends full: it counted every memory written and every read, rating and forget
    steps = core.steps(200)
    assert steps == size["memories"] + 2 * 5 + 3 * 20 + 3
    assert f"{steps}/{steps}" in capsys.readouterr().err
    assert size["writes_per_s_single"] > 0 and size["writes_per_s_batched"] > 0
    assert size["write_single_max_ms"] > 0
    if db == "sqlite":  # the run's link changes wait in the pending list, measured
        assert size["pending_links_copy"]["rows"] > 0 and size["pending_links_copy"]["mb"] > 0
    else:
        assert size["pending_links_copy"] is None
    assert (
        0 < size["read_concepts"]["hops_1"]["p50_ms"] <= size["read_concepts"]["hops_1"]["p95_ms"]
    )
    assert report["environment"]["backend"] in ("sqlite", "postgresql")


def test_statements_benchmark_counts_one_write_transaction(tmp_path: Path) -> None:
    statements = pytest.importorskip("assocmem_bench.statements")
    report = statements.run(str(tmp_path / "s.json"), memories=50, embedder=ToyEmbedder)
    assert json.loads((tmp_path / "s.json").read_text()) == report
    assert report["declaring_write"]["write_transactions"] == 1
    reads = (
        "text_read",
        "text_read_after_a_write",
        "text_read_with_lessons",
        "text_read_by_meaning",
    )
    for read in reads:
        assert report[read]["pragma_data_version"] == 1
        assert report[read]["write_transactions"] == 0
        assert report[read]["statements"] > 0
    assert report["text_read_with_lessons"]["embedder"] == ToyEmbedder().model_id


def test_a_report_names_the_versions_its_figures_depend_on() -> None:
    measure = pytest.importorskip("assocmem_bench.measure")
    versions = measure.environment()["packages"]
    assert versions["assocmem"] == importlib.metadata.version("assocmem")
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert measure.installed(["assocmem", "no-such-package"]) == {"assocmem": versions["assocmem"]}
