"""The folds benchmark runs end to end on a small LoCoMo-format file: every variant on
every question, the subsets counted as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from assocmem_bench import folds

from tests.bench.test_bench_locomo import _tiny_locomo_file


@pytest.mark.slow
def test_every_variant_reads_every_question(tmp_path: Path, db: str) -> None:
    out = tmp_path / "folds.json"
    folds.run(str(_tiny_locomo_file(tmp_path / "tiny.json")), str(out), db=db)
    report = json.loads(out.read_text())
    assert set(report["recall"]) == set(report["variants"]) == set(folds.VARIANTS)
    assert report["variants"]["seed product (both)"] == {"decay_weight": 1.0, "value_exponent": 1.0}
    for variant, by_subset in report["recall"].items():
        assert set(by_subset) == set(folds.SUBSETS), variant
        everything = by_subset["all"]["n"]
        assert everything == 10  # the questions with evidence in the conversation
        marked, bare = by_subset["evidence marked"]["n"], by_subset["nothing of it marked"]["n"]
        assert 0 < marked and marked + bare <= everything
        assert all(b["recall@10"] is None or 0.0 <= b["recall@10"] <= 1.0
                   for b in by_subset.values())  # fmt: skip
    # What a mark is for: the marked evidence ranks higher once value counts.
    recall = report["recall"]
    assert (recall["value 1 (product) alone"]["evidence marked"]["recall@10"]
            >= recall["no folds"]["evidence marked"]["recall@10"])  # fmt: skip
