"""The learning benchmark runs end to end, shrunk, and its workload keeps its promises.

What the memory learns is the engine's business: these tests check the workload
(deterministic, fixes unfindable by words, synonym wordings sharing no stem with
anything taught) and the controls (restart, rebuild, noisy teachers, the nearest
past question), never the learning figures themselves.
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

SECTIONS = {"environment", "config", "workload", "outcomes", "random_feedback", "noisy_feedback",
            "baselines", "nearest_past_question", "restart", "rebuilt", "interference",
            "latency", "read_text", "locomo", "seconds"}  # fmt: skip
WORDINGS = ("original", "frames", "synonyms")
TOY_RESTART = (
    "from assocmem.testing import ToyEmbedder; "
    "from assocmem.vectors.embedders import register_embedder; "
    "register_embedder('toy', ToyEmbedder); "
)


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
    return {key: block[key] for key in (*learning.MODES, "frames", "synonyms")}


def _check_blocks(block: dict[str, Any], types: int) -> None:
    """Every wording set scored in both modes, over as many reads as the set holds."""
    reads = {"original": workload_module.HELD_OUT, "frames": workload_module.HELD_OUT_NEW_TEMPLATES,
             "synonyms": workload_module.SYNONYM_WORDINGS}  # fmt: skip
    for wording, per_type in reads.items():
        figures = block if wording == "original" else block[wording]
        for mode in learning.MODES:
            assert 0.0 <= figures[mode]["recall@5"] <= 1.0
            assert 0.0 <= figures[mode]["mrr@10"] <= 1.0
            assert len(figures[mode]["fix_source_by_read"]) == types * per_type


def _check_read_text(table: dict[str, Any], nearest: bool, columns: list[str]) -> None:
    assert table["outcomes"] == columns
    for row in (*WORDINGS, "noise_0.2", "noise_0.4", "random_feedback"):
        assert list(table[row]) == columns
        for cell in table[row].values():
            assert set(cell) == {"recall@5", "mrr@10"}
    assert set(table["interference"]) == {"3"} and set(table["restart"]) == {"3"}
    assert set(table["rebuilt"]) == {"0"}
    assert table["rebuilt"]["0"] == table["original"]["0"]
    assert table["restart"]["3"] == table["original"]["3"]
    for row in ("noise_0.2", "noise_0.4", "random_feedback"):
        assert table[row]["0"] == table["original"]["0"]  # no call, nothing to get wrong
    if nearest:
        assert set(table["nearest_past_question"]) == set(WORDINGS)
        assert table["nearest_past_question"]["original"]["0"] == {"recall@5": 0.0, "mrr@10": 0.0}
    else:
        assert table["nearest_past_question"] is None


@pytest.mark.slow
def test_report_has_every_section(report: dict[str, Any]) -> None:
    assert set(report) == SECTIONS | {"run"}  # the CLI adds the run section
    assert set(report["outcomes"]) == {"0", "1", "3"}
    assert set(report["random_feedback"]) == {"1", "3"}
    assert set(report["noisy_feedback"]) == {"0.2", "0.4"}
    noisy = [*report["noisy_feedback"]["0.2"].values(), *report["noisy_feedback"]["0.4"].values()]
    for block in (*report["outcomes"].values(), *report["random_feedback"].values(), *noisy):
        _check_blocks(block, 8)
    assert report["outcomes"]["3"]["feedback_calls"] == 8 * 3
    for p, blocks in report["noisy_feedback"].items():
        assert set(blocks) == {"1", "3"}
        for n, block in blocks.items():
            assert block["feedback_calls"] == 8 * int(n)
            assert block["wrong_calls"] == round(float(p) * 8 * int(n))
    _check_read_text(report["read_text"], nearest=False, columns=["0", "1", "3"])
    assert report["nearest_past_question"] is None
    latency = report["latency"]
    assert latency["no_feedback"]["outcomes"] == 0 and latency["taught"]["outcomes"] == 3
    for timed in (latency["no_feedback"], latency["taught"]):
        assert timed["reads"] == 8 * (workload_module.HELD_OUT + workload_module.SYNONYM_WORDINGS)
        assert 0 < timed["p50_ms"] <= timed["p95_ms"]
    assert report["workload"]["synonym_overlaps"] == 0
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
    assert transfer["feedback_newcomers"]  # feedback brings some turn into a held-out read
    for counts in transfer["feedback_newcomers"].values():
        assert set(counts) <= {"evidence", "other"} and all(n > 0 for n in counts.values())


def test_newcomers_are_the_turns_feedback_brought_in_by_arm() -> None:
    held = [learning.locomo.Question("where?", 1, ["D1:2"])]
    before = [[("D1:1", "lexical"), ("D1:3", "semantic")]]
    after = [[("D1:2", "learned"), ("D1:1", "lexical"), ("D1:4", "learned"), ("D1:5", "thread")]]
    counts: learning.Newcomers = {}
    learning.newcomers(held, before, after, counts)
    assert counts == {"learned": {"evidence": 1, "other": 1}, "thread": {"other": 1}}


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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_synonym_wordings_share_no_stem_with_training_or_fixes(seed: int) -> None:
    workload = workload_module.generate(seed, 40, 2000)
    stems = workload_module.stems
    taught = set().union(
        *(stems(q.text) for t in workload.types for q in t.training),
        *(stems(n.text) for n in workload.notes if n.role == "fix"),
    )
    for problem in workload.types:
        assert len(problem.synonyms) == workload_module.SYNONYM_WORDINGS
        assert len({q.text for q in problem.synonyms}) == len(problem.synonyms)
        for question in problem.synonyms:
            assert question.synonyms and question.type_index == problem.index
            assert not stems(question.text) & taught, question.text
            assert not stems(question.text) & workload_module.word_stems(problem.problem_words)
    assert workload_module.synonym_overlaps(workload) == []


def test_every_problem_word_has_a_synonym_in_other_words() -> None:
    workload = workload_module.generate(0, 40, 2000)
    all_words = workload_module.word_stems(workload_module.WORDS)
    for problem in workload.types:
        for word in problem.problem_words:
            synonym = workload_module.SYNONYMS[word]
            assert not workload_module.stems(synonym) & all_words, (word, synonym)
    assert len(workload_module.speakable(workload_module.vocabulary())) >= 40 * 8


def test_the_synonym_check_catches_a_shared_stem() -> None:
    workload = workload_module.generate(0, 8, 200)
    problem = workload.types[0]
    leaked = workload_module.Question(problem.training[0].text, 0, True, synonyms=True)
    problem.synonyms.append(leaked)
    assert [text for text, _ in workload_module.synonym_overlaps(workload)] == [leaked.text]


def _toy_context(tmp_path: Path, types: int = 8, notes: int = 200) -> Any:
    pytest.importorskip("numpy")
    from assocmem.testing import ToyEmbedder

    workload = workload_module.generate(0, types, notes)
    id_of = {n.key: f"id-{n.key}" for n in workload.notes}
    embedder = learning.CachedEmbedder(ToyEmbedder())
    return learning.Context(workload, tmp_path, embedder, "toy", tmp_path / "unused.db", id_of, 0.0)


def test_a_noisy_teacher_rates_another_fix_on_a_share_of_calls(tmp_path: Path) -> None:
    ctx = _toy_context(tmp_path)
    steps = learning.fixing_steps(ctx, 5)
    fixes = {ctx.id_of[t.fix_key] for t in ctx.workload.types}
    noisy = learning.noisy_steps(ctx, steps, 0.4, learning.random.Random("x"))
    wrong = [(a, b) for a, b in zip(steps, noisy, strict=True) if a != b]
    assert len(wrong) == 16  # 40 calls
    for (text, right), (same_text, rated) in wrong:
        assert text == same_text and rated[0] in fixes and rated != right
    assert noisy == learning.noisy_steps(ctx, steps, 0.4, learning.random.Random("x"))
    assert learning.noisy_steps(ctx, steps, 0.0, learning.random.Random("x")) == steps


def test_the_nearest_past_question_returns_the_note_rated_for_it(tmp_path: Path) -> None:
    ctx = _toy_context(tmp_path)
    # Rated for the very questions read: each one's nearest past question is itself.
    itself = [
        (q.text, [ctx.id_of[ctx.workload.types[q.type_index].fix_key]]) for q in ctx.questions
    ]
    figures = learning.nearest_past_question(ctx, itself)
    assert figures["rated_questions"] == len(ctx.questions)
    for wording in WORDINGS:
        block = figures[wording]
        assert block["recall@5"] == block["mrr@10"] == block["ranked_recall@5"] == 1.0
        assert block["median_cosine_own_type"] == pytest.approx(1.0, abs=1e-3)
        assert block["median_cosine_other_type"] < block["median_cosine_own_type"]
    nothing = learning.nearest_past_question(ctx, [])
    assert nothing["rated_questions"] == 0 and nothing["original"]["recall@5"] == 0.0
    trained = learning.nearest_past_question(ctx, learning.fixing_steps(ctx, 2))
    assert trained["rated_questions"] == 8 * 2
    assert all(0.0 <= trained[w]["recall@5"] <= 1.0 for w in WORDINGS)
    # Ranking every rated note by its nearest question holds at least the nearest one.
    assert all(trained[w]["ranked_recall@5"] >= trained[w]["recall@5"] for w in WORDINGS)


def test_embedder_names_take_one_or_several() -> None:
    assert learning.embedder_names("minilm") == ["minilm"]
    assert learning.embedder_names("minilm,none") == ["minilm", None]
    assert learning.embedder_names(None) == [None]
    assert learning.embedder_names(["toy", None]) == ["toy", None]
    with pytest.raises(ValueError):
        learning.embedder_names("none,none")


@pytest.mark.slow
def test_several_embedders_get_a_section_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numpy")
    from assocmem.testing import ToyEmbedder
    from assocmem.vectors.embedders import register_embedder, unregister_embedder

    register_embedder("toy", ToyEmbedder)
    monkeypatch.setattr(learning, "RESTART_CODE", TOY_RESTART + learning.RESTART_CODE)
    try:
        report = learning.run(str(tmp_path / "both.json"), types=4, notes=60,
                              embedder_name="toy,none", outcomes=(0, 3))  # fmt: skip
    finally:
        unregister_embedder("toy")
    assert json.loads((tmp_path / "both.json").read_text()) == report
    assert set(report) == {"config", "embedders", "seconds"}
    assert report["config"]["embedders"] == ["toy", "none"]
    for name, section in report["embedders"].items():
        assert set(section) == SECTIONS - {"locomo"}
        assert section["config"]["embedder"] == (None if name == "none" else name)
        assert section["restart"]["identical_rankings"] and section["rebuilt"]["identical_rankings"]
        _check_read_text(section["read_text"], nearest=name == "toy", columns=["0", "3"])
    nearest = report["embedders"]["toy"]["nearest_past_question"]
    assert set(nearest) == {"outcomes", "noise_0.2", "noise_0.4"}
    assert nearest["outcomes"]["3"]["rated_questions"] == 4 * 3
    assert report["embedders"]["toy"]["baselines"]["dense"] is not None


def test_the_scale_bench_times_both_stores_on_the_same_questions(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    args = ["--notes", "400", "--rated", "40", "--types", "8", "--out", str(out)]
    assert main(["bench", "learning-scale", *args]) == 0
    report = json.loads(out.read_text())
    assert report["config"]["rated_reads"] == 40 and report["config"]["embedder"] == "none"
    reads = report["config"]["questions"] * report["config"]["rounds"]
    assert report["no_feedback"]["reads"] == report["taught"]["reads"] == reads
    assert report["p50_ratio"] == pytest.approx(
        report["taught"]["p50_ms"] / report["no_feedback"]["p50_ms"], abs=0.001
    )


def test_the_rewordings_bench_scores_every_condition(tmp_path: Path) -> None:
    from assocmem.testing import ToyEmbedder
    from assocmem.vectors.embedders import register_embedder, unregister_embedder

    rewordings = pytest.importorskip("assocmem_bench.rewordings")
    register_embedder("toy", ToyEmbedder)
    try:
        out = tmp_path / "rewordings.json"
        args = ["--embedder", "toy", "--notes", "40", "--out", str(out)]
        assert main(["bench", "rewordings", *args]) == 0
    finally:
        unregister_embedder("toy")
    report = json.loads(out.read_text())
    assert set(report["outcomes"]) == {"0", "1", "3"}
    assert report["outcomes"]["0"]["nearest_past_question"] is None
    for block in (*report["outcomes"].values(), report["interference"]):
        assert 0.0 <= block["rewordings"]["recall@5"] <= 1.0
    assert report["interference"]["untaught_wrong_fixes_in_top5"] >= 0.0
    assert len(rewordings.load()) == report["config"]["types"]


def test_the_rewordings_data_refuses_a_fix_sharing_a_word(tmp_path: Path) -> None:
    rewordings = pytest.importorskip("assocmem_bench.rewordings")
    data = json.loads(rewordings.DATA.read_text())
    data["types"][0]["fix"] += " and restart the proxy"  # a word its rewordings use
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="proxi"):
        rewordings.load(path)
