"""The learning benchmark runs end to end, shrunk, and its workload keeps its promises.

What the memory learns is the engine's business: these tests check the workload
(deterministic, fixes unfindable by words) and the controls (restart, rebuild),
never the learning figures themselves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assocmem.adapters.cli import main

learning = pytest.importorskip("assocmem_bench.learning")
workload_module = pytest.importorskip("assocmem_bench.learning_workload")
pytest.importorskip("bm25s")

from tests.bench.test_bench_locomo import _tiny_locomo_file  # noqa: E402

SECTIONS = {"environment", "config", "workload", "outcomes", "random_feedback", "baselines",
            "restart", "rebuilt", "interference", "locomo", "seconds"}  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("learning")
    out = folder / "learning.json"
    data = _tiny_locomo_file(folder / "tiny.json")
    argv = ["bench", "learning", "--types", "8", "--notes", "200", "--embedder", "none",
            "--outcomes", "0,1,3", "--locomo", str(data), "--repeats", "2",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    return json.loads(out.read_text())


def _figures(block: dict[str, Any]) -> dict[str, Any]:
    return {mode: block[mode] for mode in learning.MODES}


@pytest.mark.slow
def test_report_has_every_section(report: dict[str, Any]) -> None:
    assert set(report) == SECTIONS
    assert set(report["outcomes"]) == {"0", "1", "3"}
    assert set(report["random_feedback"]) == {"1", "3"}
    for block in (*report["outcomes"].values(), *report["random_feedback"].values()):
        for mode in learning.MODES:
            assert 0.0 <= block[mode]["recall@5"] <= 1.0
            assert 0.0 <= block[mode]["mrr@10"] <= 1.0
            assert len(block[mode]["fix_source_by_read"]) == 8 * workload_module.HELD_OUT
    assert report["outcomes"]["3"]["feedback_calls"] == 8 * 3
    assert report["baselines"]["dense"] is None and report["workload"]["dense_check"] is None
    assert report["workload"]["notes"] == {"total": 200, "fix": 8, "symptom": 24, "noise": 168}
    assert report["interference"]["taught_types"] == [0, 2, 4, 6]
    transfer = report["locomo"]
    overall = transfer["recall@10"]["overall(1-4)"]
    assert overall["n"] == 9  # the tiny file's 9 scored questions, each held out twice
    assert len(overall["gain"]["ci95"]) == 2
    assert transfer["repeats"] == 2 and len(transfer["folds"]) == 4
    assert [fold["n"] for fold in transfer["folds"]] == [4, 5, 4, 5]
    # A question's recall is its mean over the folds that held it out (each question
    # is held out once per repeat, so the folds count by their sizes).
    for system in ("no_feedback", "feedback", "random"):
        held = sum(fold["n"] for fold in transfer["folds"])
        folded = sum(fold[system] * fold["n"] for fold in transfer["folds"]) / held
        assert overall[system] == pytest.approx(folded, abs=0.002)


@pytest.mark.slow
def test_restart_reads_what_the_process_read(report: dict[str, Any]) -> None:
    assert report["restart"]["equal_to_in_process"] and report["restart"]["identical_rankings"]
    assert _figures(report["restart"]) == _figures(report["outcomes"]["3"])


@pytest.mark.slow
def test_a_rebuilt_store_knows_nothing_feedback_taught(report: dict[str, Any]) -> None:
    assert report["rebuilt"]["equal_to_no_feedback"] and report["rebuilt"]["identical_rankings"]
    assert _figures(report["rebuilt"]) == _figures(report["outcomes"]["0"])


def _contents(workload: Any) -> tuple[Any, ...]:
    return (
        [(n.key, n.text) for n in workload.notes],
        [[q.text for q in (*t.training, *t.held_out)] for t in workload.types],
    )


def test_the_workload_is_deterministic_in_its_seed() -> None:
    first, again = workload_module.generate(3, 8, 200), workload_module.generate(3, 8, 200)
    other = workload_module.generate(4, 8, 200)
    assert _contents(first) == _contents(again)
    assert first.fingerprint() == again.fingerprint()
    assert _contents(first) != _contents(other)
    assert first.fingerprint() != other.fingerprint()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_problem_and_fixing_words_of_a_type_are_disjoint(seed: int) -> None:
    stems = workload_module.word_stems
    for problem in workload_module.generate(seed, 40, 2000).types:
        assert len(problem.problem_words) == workload_module.PROBLEM_WORDS
        assert len(problem.fixing_words) == workload_module.FIXING_WORDS
        assert not set(problem.problem_words) & set(problem.fixing_words)
        assert not stems(problem.problem_words) & stems(problem.fixing_words)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_question_shares_a_word_with_its_fixing_note(seed: int) -> None:
    workload = workload_module.generate(seed, 40, 2000)
    fixes = {n.type_index: n.text for n in workload.notes if n.role == "fix"}
    assert len(fixes) == 40
    for problem in workload.types:
        fix_words = set(workload_module.tokens(fixes[problem.index]))
        for question in (*problem.training, *problem.held_out):
            assert not set(workload_module.tokens(question.text)) & fix_words, question.text
    assert workload_module.fix_overlaps(workload) == []


def test_held_out_wordings_differ_from_training_ones() -> None:
    workload = workload_module.generate(0, 40, 2000)
    for problem in workload.types:
        trained = {frozenset(workload_module.content_words(q.text)) for q in problem.training}
        held = [frozenset(workload_module.content_words(q.text)) for q in problem.held_out]
        assert not trained & set(held) and len(set(held)) == len(held)
        assert sum(q.new_template for q in problem.held_out) > 0
    assert len(workload_module.QUESTION_TEMPLATES) >= 8


def test_the_locomo_split_is_seeded_and_disjoint() -> None:
    questions = [learning.locomo.Question(f"question {n}?", 1, ["D1:1"]) for n in range(20)]
    train, held = learning.split_questions(questions, 0)
    assert (train, held) == learning.split_questions(list(reversed(questions)), 0)
    assert len(train) == len(held) == 10 and not {q.text for q in train} & {q.text for q in held}
    assert (train, held) != learning.split_questions(questions, 1)


def test_every_question_is_held_out_once_per_repetition() -> None:
    questions = [learning.locomo.Question(f"question {n}?", 1, ["D1:1"]) for n in range(20)]
    chosen = learning.folds(questions, 0, 3)
    assert len(chosen) == 6
    assert chosen[0] == learning.split_questions(questions, 0)  # the single split of old
    for train, held in chosen:
        assert sorted(q.text for q in train + held) == sorted(q.text for q in questions)
    for first, second in zip(chosen[0::2], chosen[1::2], strict=True):
        assert first == second[::-1]
    assert len({tuple(q.text for q in held) for _, held in chosen[0::2]}) == 3
    assert set(Counter(q.text for _, held in chosen for q in held).values()) == {3}


def test_the_repeats_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "learning", "--repeats", "0", "--out", str(tmp_path / "x.json")])


def test_store_copies_refuse_an_open_wal(tmp_path: Path) -> None:
    from assocmem import Memory

    path = tmp_path / "open.db"
    mem = Memory(str(path), agent_id="learning")
    try:
        mem.write("a note kept in the write-ahead log")
        with pytest.raises(RuntimeError, match="unmerged WAL"):
            learning.copy_store(path, tmp_path / "copy.db")
    finally:
        mem.close()
    learning.copy_store(path, tmp_path / "copy.db")
    with Memory(str(tmp_path / "copy.db"), agent_id="learning") as copy:
        assert copy.stats().memories == 1


def test_the_cached_embedder_embeds_each_batch_once() -> None:
    numpy = pytest.importorskip("numpy")
    from assocmem.testing import ToyEmbedder

    inner = ToyEmbedder()
    cached = learning.CachedEmbedder(inner)
    first = cached.embed_one("Why is the kettle humming?")
    again = cached.embed_one("Why is the kettle humming?")
    assert numpy.array_equal(first, again)
    assert numpy.array_equal(first, ToyEmbedder().embed_one("Why is the kettle humming?"))
    assert inner.calls == [1] and cached.model_id == inner.model_id


def test_the_dense_check_ranks_every_held_out_fixing_note(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from assocmem.testing import ToyEmbedder

    workload = workload_module.generate(0, 8, 200)
    embedder = learning.CachedEmbedder(ToyEmbedder())
    ctx = learning.Context(workload, tmp_path, embedder, "toy", tmp_path / "unused.db", {}, 0.0)
    baselines, check = learning.baselines(ctx)
    # a question shares no word with its fixing note: BM25 never returns it
    assert set(baselines) == {"bm25", "dense"} and baselines["bm25"]["recall@5"] == 0.0
    assert len(check["per_type"]) == 8
    for entry in check["per_type"]:
        assert len(entry["rank"]) == workload_module.HELD_OUT
        assert all(1 <= rank <= 200 for rank in entry["rank"])
    assert 0.0 <= check["share_fix_in_dense_top5"] <= 1.0
