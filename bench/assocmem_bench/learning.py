"""Learning benchmark: does what the memory learns from outcomes reach a reader's top 5?

On a generated recurring-problem workload (`learning_workload`) whose fixing notes
share no word with the questions about them, the memory is told, for each problem
type, which note fixed it after n training questions (each rating names the read
it rates, so the memory learns what that read asked); then held-out wordings of
every type are read as text and as concepts, and the fixing note's recall@5 and
MRR@10 are scored. The held-out wordings come in three sets, scored apart: the
original ones (training templates and new ones, the same symptom words), the
frames (those of them in templates no training question used) and the synonyms
(the symptoms said in other words, sharing no stem with any training question or
fixing note: only what was learned about the questions' meaning can carry over).
Next to each n: no feedback (n = 0), the same feedback calls rating random notes,
noisy teachers (a fraction p of the calls rating another type's fixing note), BM25
and dense baselines, the reference "nearest past question" (with an embedder: the
note rated for the rated question nearest each held-out one), the n = 3 store read
again in a fresh process (restart), a store rebuilt from the notes (what feedback
taught is not in them), teaching half the types (do their fixes crowd the other
half's top 5?), and read latency with and without learned state. `read_text`
gathers the text-read figures of every condition by n. Several embedders (or none)
can be measured in one run, each in a section of its own. With a LoCoMo-format
file, each conversation's questions are split in two halves and feedback on one
half's evidence is scored on the other's, both ways round and on several splits
(see `REPEATS`), with a random-feedback control and bootstrap intervals of the
paired gains.

The note store is built (and embedded) once per embedder; each condition reads a copy of its
SQLite file, taken after the store was closed (so the WAL is checkpointed into it).
Every note is observed at one fixed, long past moment, so every note has faded
alike and a read restarts no decay clock: reads change nothing, and a copy read
twice, or in another process, ranks the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar
from assocmem.vectors.embedders import Embedder, load_embedder

from . import learning_workload, locomo
from .learning_workload import Question, Workload
from .measure import environment

AGENT = "learning"
READ_K = 10
TOP = 5
RESTART_OUTCOMES = 3
INTERFERENCE_OUTCOMES = 3
LATENCY_OUTCOMES = 5  # the taught store timed against the untaught one (or the largest n)
NOISE = (0.2, 0.4)  # shares of rating calls that name a wrong fixing note
RESAMPLES = 2_000
# The LoCoMo stores are indexed, and read, under the profile the LoCoMo benchmark
# scores (speaker labels stripped before embedding, questions folded).
LOCOMO_PROFILE = "conversation"
MODES = ("text", "concepts")  # a held-out question read as its text, and as its content words
DIRECT_SOURCES = frozenset({"lexical", "semantic"})
# Notes are episodic (half-life 7 days): this is long past, so every note has faded alike
# and no read restarts a clock, whenever the benchmark runs.
OBSERVED_AT = datetime(2020, 1, 1, tzinfo=UTC)

Ranking = list[tuple[str, str]]  # (note key, source) of each item, best first
Reads = list[dict[str, Any]]  # per held-out question: its type, its set and both rankings
Steps = list[tuple[str, list[str]]]  # (question, ids rated as having helped) per feedback call
Halves = tuple[list[locomo.Question], list[locomo.Question]]  # training, held out


@dataclass
class Context:
    """What every condition shares: the workload, the built store and the clock."""

    workload: Workload
    folder: Path
    embedder: Embedder | None
    embedder_name: str | None
    base: Path
    id_of: dict[str, str]  # note key -> memory id (the same in every copy)
    start: float

    @property
    def key_of(self) -> dict[str, str]:
        return {memory_id: key for key, memory_id in self.id_of.items()}

    @property
    def held_out(self) -> list[Question]:
        return [q for t in self.workload.types for q in t.held_out]

    @property
    def questions(self) -> list[Question]:
        """Every question read after teaching: the held-out wordings, then the synonyms."""
        return self.held_out + [q for t in self.workload.types for q in t.synonyms]

    def wording_sets(self) -> dict[str, list[Question]]:
        """The held-out questions by the set each is scored in (frames are original too)."""
        return {
            "original": self.held_out,
            "frames": [q for q in self.held_out if q.new_template],
            "synonyms": [q for t in self.workload.types for q in t.synonyms],
        }

    def say(self, message: str) -> None:
        elapsed = time.perf_counter() - self.start
        label = self.embedder_name or "none"
        print(f"[{elapsed:6.1f}s] {label}: {message}", file=sys.stderr, flush=True)


class CachedEmbedder(Embedder):
    """The embedder given, remembering each batch it embedded.

    Every condition asks the same questions of a copy of the same notes, and a
    text's vector does not depend on the store, so each question is embedded once
    for the whole run (embedding dominates a read on a CPU). A batch is looked up
    whole: the vectors are exactly those the model would compute again.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dims = inner.model_id, inner.dims
        self.batch_size, self.normalized = inner.batch_size, inner.normalized
        self._batches: dict[tuple[str, ...], Any] = {}

    def embed_batch(self, texts: Sequence[str]) -> Any:
        key = tuple(texts)
        if key not in self._batches:
            self._batches[key] = self.inner.embed_batch(texts)
        return self._batches[key].copy()


# -- stores --------------------------------------------------------------------


BATCH = 5000  # notes per `write_many`, well within a batch's bound


def build_store(workload: Workload, path: Path, embedder: Embedder | None) -> dict[str, str]:
    """Write the workload's notes into a fresh store at ``path`` and close it; returns
    note key -> memory id."""
    rows = [
        {"text": n.text, "observed_at": OBSERVED_AT, "meta": {"note": n.key}}
        for n in workload.notes
    ]
    with Memory(str(path), agent_id=AGENT, embedder=embedder) as mem:
        results = [
            result
            for start in range(0, len(rows), BATCH)
            for result in mem.write_many(rows[start : start + BATCH])
        ]
    refused = [r.reason for r in results if not r.stored]
    if refused:
        raise RuntimeError(f"{len(refused)} notes were not stored: {refused[:3]}")
    return {n.key: str(r.id) for n, r in zip(workload.notes, results, strict=True)}


def copy_store(source: Path, target: Path) -> Path:
    """A copy of a closed store's file (the WAL was checkpointed into it at close)."""
    wal = Path(f"{source}-wal")
    if wal.exists() and wal.stat().st_size:
        raise RuntimeError(f"{source} has an unmerged WAL: close the store before copying it")
    shutil.copyfile(source, target)
    return target


def teach(mem: Memory, steps: Steps, tick: Callable[[], None] = lambda: None) -> None:
    """For each (question, ids): read the question, then rate those ids as having helped."""
    for text, ids in steps:
        _rate(mem, mem.read(text, k=READ_K), ids, 1.0)
        tick()


def _rate(mem: Memory, result: Any, used: Sequence[str], outcome: float) -> None:
    """Rate ``used`` for the read ``result`` through its handle: the memory learns
    what the read asked, its concepts and, with an embedder, its meaning."""
    mem.feedback(used, outcome, read=result.id)


def fixing_steps(ctx: Context, n: int, types: Sequence[int] | None = None) -> Steps:
    """n training questions per type (cycling its wordings), each rating its fixing note."""
    chosen = [t for t in ctx.workload.types if types is None or t.index in types]
    return [
        (t.training[i % len(t.training)].text, [ctx.id_of[t.fix_key]])
        for t in chosen
        for i in range(n)
    ]


def random_steps(steps: Steps, ids: Sequence[str], rng: random.Random) -> Steps:
    """The same questions, each rating one uniformly random note instead."""
    return [(text, [rng.choice(ids)]) for text, _ in steps]


def noisy_steps(ctx: Context, steps: Steps, share: float, rng: random.Random) -> Steps:
    """The same calls, a ``share`` of them (drawn by ``rng``) rating another type's fixing
    note instead of the right one: a teacher who is sometimes wrong."""
    fixes = [ctx.id_of[t.fix_key] for t in ctx.workload.types]
    wrong = set(rng.sample(range(len(steps)), round(share * len(steps))))
    noisy = []
    for n, (text, ids) in enumerate(steps):
        if n in wrong:
            ids = [rng.choice([f for f in fixes if f not in ids])]
        noisy.append((text, ids))
    return noisy


# -- reading and scoring -------------------------------------------------------


def held_out_reads(mem: Memory, questions: Sequence[Question], key_of: dict[str, str]) -> Reads:
    """Each question read as text and as its content words, rankings as note keys."""
    reads = []
    for q in questions:
        text = mem.read(q.text, k=READ_K).items
        concepts = mem.read(concepts=learning_workload.content_words(q.text), k=READ_K).items
        reads.append(
            {
                "type": q.type_index,
                "new_template": q.new_template,
                "synonyms": q.synonyms,
                "text": [(key_of[i.id], i.source) for i in text],
                "concepts": [(key_of[i.id], i.source) for i in concepts],
            }
        )
    return reads


def reciprocal_rank(ranking: Sequence[str], wanted: str) -> float:
    return 1.0 / (ranking.index(wanted) + 1) if wanted in ranking[:READ_K] else 0.0


def score_block(
    rankings: Sequence[Ranking], wanted: Sequence[str], new_template: Sequence[bool]
) -> dict[str, Any]:
    """recall@5, MRR@10, and which arm brought the wanted note, over some reads."""
    hits = [w in [k for k, _ in r[:TOP]] for r, w in zip(rankings, wanted, strict=True)]
    fix_source = [dict(r).get(w) for r, w in zip(rankings, wanted, strict=True)]
    by_source = Counter(s for r in rankings for _, s in r)
    unseen = [h for h, new in zip(hits, new_template, strict=True) if new]
    return {
        "recall@5": _mean(hits),
        "mrr@10": _mean(
            reciprocal_rank([k for k, _ in r], w) for r, w in zip(rankings, wanted, strict=True)
        ),
        "recall@5_new_templates": _mean(unseen),
        "fix_returned": sum(s is not None for s in fix_source),
        "fix_sources": dict(sorted(Counter(s for s in fix_source if s).items())),
        "fix_source_by_read": fix_source,
        "mean_items_not_lexical_semantic": _mean(
            sum(s not in DIRECT_SOURCES for _, s in r) for r in rankings
        ),
        "mean_items_by_source": {
            s: round(c / max(1, len(rankings)), 3) for s, c in sorted(by_source.items())
        },
    }


def summarize(ctx: Context, reads: Reads) -> dict[str, Any]:
    """Text and concept figures of the original held-out reads (at the top, as ever),
    and of the frames and the synonyms apart (None where no such read was made)."""
    original = [r for r in reads if not r["synonyms"]]
    figures: dict[str, Any] = _modes(ctx, original) or {}
    figures["frames"] = _modes(ctx, [r for r in original if r["new_template"]])
    figures["synonyms"] = _modes(ctx, [r for r in reads if r["synonyms"]])
    return figures


def _modes(ctx: Context, reads: Reads) -> dict[str, Any] | None:
    if not reads:
        return None
    wanted = [ctx.workload.types[r["type"]].fix_key for r in reads]
    new = [r["new_template"] for r in reads]
    return {mode: score_block([r[mode] for r in reads], wanted, new) for mode in MODES}


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(statistics.fmean(values), 3) if values else 0.0


def _line(figures: dict[str, Any]) -> str:
    parts = [
        f"{mode} r@5={figures[mode]['recall@5']:.3f} mrr={figures[mode]['mrr@10']:.3f}"
        for mode in MODES
    ]
    for name in ("frames", "synonyms"):
        if figures.get(name):
            parts.append(f"{name} text r@5={figures[name]['text']['recall@5']:.3f}")
    return " | ".join(parts)


# -- conditions ----------------------------------------------------------------


def condition(ctx: Context, name: str, steps: Steps) -> tuple[Path, Reads]:
    """Teach a fresh copy of the base store, then read every held-out question."""
    path = copy_store(ctx.base, ctx.folder / f"{name}.db")
    with Memory(str(path), agent_id=AGENT, embedder=ctx.embedder) as mem:
        teach(mem, steps)
        reads = held_out_reads(mem, ctx.questions, ctx.key_of)
    return path, reads


def measured(
    ctx: Context, name: str, label: str, steps: Steps
) -> tuple[Path, Reads, dict[str, Any]]:
    """One condition with its figures and the seconds it took, said as it ends."""
    began = time.perf_counter()
    path, reads = condition(ctx, name, steps)
    figures = {"feedback_calls": len(steps), **summarize(ctx, reads), "seconds": _since(began)}
    ctx.say(f"{label}: {_line(figures)} ({figures['seconds']}s)")
    return path, reads, figures


def outcome_conditions(
    ctx: Context, outcomes: Sequence[int], seed: int, noise: Sequence[float] = NOISE
) -> dict[str, Any]:
    """Fixing, random and noisy feedback after n outcomes per type, for every n; the
    reads, stores, figures and rating calls of every n stay for the later sections."""
    report: dict[str, Any] = {
        "outcomes": {},
        "random_feedback": {},
        "noisy_feedback": {str(p): {} for p in noise},
        **{f"_{part}": {} for part in ("reads", "paths", "figures", "steps")},
    }
    all_ids = [ctx.id_of[n.key] for n in ctx.workload.notes]
    for n in sorted(set(outcomes) | {0}):
        steps = fixing_steps(ctx, n)
        path, reads, figures = measured(ctx, f"outcomes-{n}", f"outcomes n={n}", steps)
        report["_reads"][n], report["_paths"][n] = reads, path
        report["_figures"][n], report["_steps"][n] = figures, {"outcomes": steps}
        if n in outcomes:
            report["outcomes"][str(n)] = figures
        if n == 0:
            continue
        rng = random.Random(f"{seed}:random:{n}")
        shuffled = random_steps(steps, all_ids, rng)
        _, _, report["random_feedback"][str(n)] = measured(
            ctx, f"random-{n}", f"random feedback n={n}", shuffled
        )
        for p in noise:
            noisy = noisy_steps(ctx, steps, p, random.Random(f"{seed}:noise:{p}:{n}"))
            report["_steps"][n][str(p)] = noisy
            _, _, figures = measured(ctx, f"noise-{p}-{n}", f"noisy teacher p={p} n={n}", noisy)
            figures["wrong_calls"] = sum(a != b for a, b in zip(steps, noisy, strict=True))
            report["noisy_feedback"][str(p)][str(n)] = figures
    return report


RESTART_CODE = (
    "import sys; from assocmem_bench import learning; learning.restart_reads(sys.argv[1])"
)


def restart_reads(spec_path: str) -> None:
    """Read the held-out questions of a spec file in this process and print the reads as
    JSON (the restart control runs this in a fresh interpreter)."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    questions = [
        Question(q["text"], q["type"], q["new_template"], q["synonyms"]) for q in spec["questions"]
    ]
    with Memory(spec["path"], agent_id=AGENT, embedder=spec["embedder"]) as mem:
        reads = held_out_reads(mem, questions, spec["key_of"])
    print(json.dumps(reads))


def restart(ctx: Context, path: Path, in_process: Reads) -> dict[str, Any]:
    """The taught store, closed, read again by a fresh Python process."""
    began = time.perf_counter()
    spec = ctx.folder / "restart.json"
    spec.write_text(
        json.dumps(
            {
                "path": str(path),
                "embedder": ctx.embedder_name,
                "key_of": ctx.key_of,
                "questions": [
                    {
                        "text": q.text,
                        "type": q.type_index,
                        "new_template": q.new_template,
                        "synonyms": q.synonyms,
                    }
                    for q in ctx.questions
                ],
            }
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", RESTART_CODE, str(spec)], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"the restart process failed: {done.stderr[-2000:]}")
    reads = [_as_tuples(r) for r in json.loads(done.stdout)]
    figures = summarize(ctx, reads)
    report = {
        "outcomes": RESTART_OUTCOMES,
        **figures,
        "equal_to_in_process": figures == summarize(ctx, in_process),
        "identical_rankings": reads == in_process,
        "seconds": _since(began),
    }
    ctx.say(f"restart n={RESTART_OUTCOMES}: {_line(figures)} equal={report['equal_to_in_process']}")
    return report


def _as_tuples(read: dict[str, Any]) -> dict[str, Any]:
    return {**read, **{m: [tuple(x) for x in read[m]] for m in MODES}}


def rebuilt(ctx: Context, no_feedback: Reads) -> dict[str, Any]:
    """A store written again from the notes alone, read with no feedback."""
    began = time.perf_counter()
    path = ctx.folder / "rebuilt.db"
    id_of = build_store(ctx.workload, path, ctx.embedder)
    key_of = {memory_id: key for key, memory_id in id_of.items()}
    with Memory(str(path), agent_id=AGENT, embedder=ctx.embedder) as mem:
        reads = held_out_reads(mem, ctx.questions, key_of)
    figures = summarize(ctx, reads)
    report = {
        **figures,
        "equal_to_no_feedback": figures == summarize(ctx, no_feedback),
        "identical_rankings": reads == no_feedback,
        "seconds": _since(began),
    }
    ctx.say(f"rebuilt: {_line(figures)} equal={report['equal_to_no_feedback']}")
    return report


def interference(ctx: Context, no_feedback: Reads) -> dict[str, Any]:
    """Teach every other type; count the taught fixes, and every other type's fixing
    note, in the untaught types' top 5 (original wordings)."""
    began = time.perf_counter()
    taught = [t.index for t in ctx.workload.types if t.index % 2 == 0]
    _, reads = condition(ctx, "interference", fixing_steps(ctx, INTERFERENCE_OUTCOMES, taught))
    taught_fixes = {ctx.workload.types[i].fix_key for i in taught}
    fixes = {t.fix_key for t in ctx.workload.types}

    def crowding(rows: Reads, mode: str, among: set[str] | None = None) -> float:
        def wrong(row: dict[str, Any]) -> set[str]:
            return (among or fixes) - {ctx.workload.types[row["type"]].fix_key}

        return _mean(sum(k in wrong(r) for k, _ in r[mode][:TOP]) for r in rows)

    untaught = [r for r in reads if r["type"] not in taught and not r["synonyms"]]
    before = [r for r in no_feedback if r["type"] not in taught and not r["synonyms"]]
    taught_figures = summarize(ctx, [r for r in reads if r["type"] in taught])
    untaught_figures = summarize(ctx, [r for r in reads if r["type"] not in taught])
    report = {
        "outcomes": INTERFERENCE_OUTCOMES,
        "taught_types": taught,
        "untaught_mean_taught_fixes_in_top5": {
            m: crowding(untaught, m, taught_fixes) for m in MODES
        },
        "untaught_mean_taught_fixes_in_top5_no_feedback": {
            m: crowding(before, m, taught_fixes) for m in MODES
        },
        "untaught_mean_wrong_fixes_in_top5": {m: crowding(untaught, m) for m in MODES},
        "untaught_mean_wrong_fixes_in_top5_no_feedback": {m: crowding(before, m) for m in MODES},
        "untaught_recall@5": {m: untaught_figures[m]["recall@5"] for m in MODES},
        "taught_recall@5": {m: taught_figures[m]["recall@5"] for m in MODES},
        "untaught_mrr@10": {m: untaught_figures[m]["mrr@10"] for m in MODES},
        "taught_mrr@10": {m: taught_figures[m]["mrr@10"] for m in MODES},
        "seconds": _since(began),
    }
    crowded = report["untaught_mean_taught_fixes_in_top5"]
    ctx.say(
        f"interference: taught fixes per untaught top 5 {crowded}, "
        f"taught r@5 {report['taught_recall@5']}"
    )
    return report


def latency(ctx: Context, untaught: Path, taught: Path, n: int) -> dict[str, Any]:
    """Text-read latency of every held-out question in the untaught store and in the
    store taught n outcomes per type (`timed_reads`)."""
    began = time.perf_counter()
    texts = [q.text for q in ctx.questions]
    stores = {"no_feedback": untaught, "taught": taught}
    times = timed_reads(stores, texts, ctx.embedder)
    report = {
        "no_feedback": {"outcomes": 0, **percentiles(times["no_feedback"])},
        "taught": {"outcomes": n, **percentiles(times["taught"])},
        "embedding": "cached: both stores read texts embedded before",
        "seconds": _since(began),
    }
    ctx.say(f"latency ms n=0 {report['no_feedback']} n={n} {report['taught']}")
    return report


def timed_reads(
    stores: Mapping[str, Path], texts: Sequence[str], embedder: Embedder | None, rounds: int = 1
) -> dict[str, list[float]]:
    """Milliseconds per text read of each text in each store, the stores taking turns
    text by text so load drifts alike for all. An untimed first pass reads every text
    once in each store, so no timed read pays opening costs or, with a cached
    embedder, embedding its question."""
    times: dict[str, list[float]] = {name: [] for name in stores}
    with contextlib.ExitStack() as stack:
        opened = {
            name: stack.enter_context(Memory(str(path), agent_id=AGENT, embedder=embedder))
            for name, path in stores.items()
        }
        for text in texts:
            for mem in opened.values():
                mem.read(text, k=READ_K)
        for _ in range(rounds):
            for text in texts:
                for name, mem in opened.items():
                    start = time.perf_counter()
                    mem.read(text, k=READ_K)
                    times[name].append((time.perf_counter() - start) * 1000)
    return times


def percentiles(ms: Sequence[float]) -> dict[str, Any]:
    cuts = statistics.quantiles(ms, n=100, method="inclusive")
    return {
        "reads": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(cuts[94], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


# -- the reference: the note rated for the nearest past question ------------------


def nearest_past_question(ctx: Context, steps: Steps) -> dict[str, Any]:
    """Per wording set: how often the note rated for the rated question whose embedding
    is nearest a held-out one's is its fixing note (one guess: recall@5 = MRR). What a
    reader could do with no memory but a log of rated questions. Beside it, ``ranked``:
    recall@5 of the rated notes ranked by their nearest rated question, and the median
    cosine of each held-out question to the nearest rated question of its own type and
    of any other type (how far apart the embedder places the types' wordings)."""
    import numpy

    assert ctx.embedder is not None
    rated = {text: ctx.key_of[ids[0]] for text, ids in steps}  # the latest rating wins
    past = list(rated)
    figures: dict[str, Any] = {"rated_questions": len(past)}
    vectors = ctx.embedder.embed(past) if past else None
    notes = sorted(set(rated.values()))
    for name, questions in ctx.wording_sets().items():
        if vectors is None or not questions:
            figures[name] = {"recall@5": 0.0, "mrr@10": 0.0} if questions else None
            continue
        similarity = ctx.embedder.embed([q.text for q in questions]) @ vectors.T
        nearest = numpy.argmax(similarity, 1)
        fixes = [ctx.workload.types[q.type_index].fix_key for q in questions]
        hits = [rated[past[i]] == fix for i, fix in zip(nearest, fixes, strict=True)]
        by_note = numpy.stack(
            [similarity[:, [rated[t] == note for t in past]].max(1) for note in notes], 1
        )
        top = numpy.argsort(-by_note, 1, kind="stable")[:, :TOP]
        ranked = [fix in {notes[j] for j in row} for row, fix in zip(top, fixes, strict=True)]
        own = [by_note[i, notes.index(fix)] for i, fix in enumerate(fixes) if fix in notes]
        other = [
            max(by_note[i, j] for j, note in enumerate(notes) if note != fix)
            for i, fix in enumerate(fixes)
            if len(notes) > 1
        ]
        figures[name] = {
            "recall@5": _mean(hits),
            "mrr@10": _mean(hits),
            "ranked_recall@5": _mean(ranked),
            "median_cosine_own_type": round(float(numpy.median(own)), 3) if own else None,
            "median_cosine_other_type": round(float(numpy.median(other)), 3) if other else None,
        }
    return figures


def nearest_past(ctx: Context, steps: dict[int, dict[str, Steps]]) -> dict[str, Any] | None:
    """The reference for every n and teacher (None without an embedder)."""
    if ctx.embedder is None:
        return None
    report: dict[str, Any] = {}
    for n, teachers in sorted(steps.items()):
        for teacher, rated in teachers.items():
            name = "outcomes" if teacher == "outcomes" else f"noise_{teacher}"
            report.setdefault(name, {})[str(n)] = nearest_past_question(ctx, rated)
    clean = {n: f["original"]["recall@5"] for n, f in report["outcomes"].items()}
    ctx.say(f"nearest past question (original r@5 by n): {clean}")
    return report


# -- the text-read table -------------------------------------------------------


def read_text_table(report: dict[str, Any], figures: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """recall@5 and MRR@10 of text reads, per condition and wording set, by n."""

    def cell(block: dict[str, Any] | None) -> dict[str, float] | None:
        return {k: block["text"][k] for k in ("recall@5", "mrr@10")} if block else None

    def by_n(blocks: dict[int, dict[str, Any]], wording: str | None = None) -> dict[str, Any]:
        return {str(n): cell(b[wording] if wording else b) for n, b in sorted(blocks.items())}

    untaught = figures[0]
    table: dict[str, Any] = {"outcomes": [str(n) for n in sorted(figures)]}
    for wording in ("original", "frames", "synonyms"):
        table[wording] = by_n(figures, None if wording == "original" else wording)
    for p, blocks in report["noisy_feedback"].items():
        table[f"noise_{p}"] = by_n({0: untaught, **{int(n): b for n, b in blocks.items()}})
    randomized = {int(n): b for n, b in report["random_feedback"].items()}
    table["random_feedback"] = by_n({0: untaught, **randomized})
    table["nearest_past_question"] = _nearest_table(report["nearest_past_question"])
    crowd = report["interference"]
    table["interference"] = {
        str(crowd["outcomes"]): {
            "untaught_wrong_fixes_in_top5": crowd["untaught_mean_wrong_fixes_in_top5"]["text"],
            "untaught_taught_fixes_in_top5": crowd["untaught_mean_taught_fixes_in_top5"]["text"],
            "untaught_recall@5": crowd["untaught_recall@5"]["text"],
            "untaught_mrr@10": crowd["untaught_mrr@10"]["text"],
            "taught_recall@5": crowd["taught_recall@5"]["text"],
            "taught_mrr@10": crowd["taught_mrr@10"]["text"],
        }
    }
    table["restart"] = {str(RESTART_OUTCOMES): cell(report["restart"])}
    table["rebuilt"] = {"0": cell(report["rebuilt"])}
    return table


def _nearest_table(nearest: dict[str, Any] | None) -> dict[str, Any] | None:
    if nearest is None:
        return None
    return {
        wording: {n: f[wording] for n, f in nearest["outcomes"].items()}
        for wording in ("original", "frames", "synonyms")
    }


# -- baselines and the workload's semantic distance -----------------------------


def baselines(ctx: Context) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """BM25 and dense recall@5 / MRR@10 on the held-out questions, and the dense
    cosine and rank of each held-out question's fixing note (None without an embedder)."""
    turns = [locomo.Turn(n.key, n.text, "", 0, OBSERVED_AT) for n in ctx.workload.notes]
    base = locomo.Baselines(turns, ctx.embedder)
    bm25, dense, check = [], [], []
    position = {n.key: i for i, n in enumerate(ctx.workload.notes)}
    for q in ctx.held_out:
        fix = ctx.workload.types[q.type_index].fix_key
        bm25.append((base.rank_bm25(q.text, READ_K), fix))
        if base.vectors is not None and ctx.embedder is not None:
            ranked = base.rank_dense(q.text, len(turns))
            dense.append((ranked[:READ_K], fix))
            cosine = float(base.vectors[position[fix]] @ ctx.embedder.embed_one(q.text))
            check.append((q.type_index, cosine, ranked.index(fix) + 1))
    report = {"bm25": _baseline_block(bm25), "dense": _baseline_block(dense) if dense else None}
    ctx.say(f"baselines: {json.dumps(report)}")
    return report, _dense_check(check) if check else None


def _baseline_block(rows: Sequence[tuple[list[str], str]]) -> dict[str, float]:
    return {
        "recall@5": _mean(fix in ranked[:TOP] for ranked, fix in rows),
        "mrr@10": _mean(reciprocal_rank(ranked, fix) for ranked, fix in rows),
    }


def _dense_check(rows: Sequence[tuple[int, float, int]]) -> dict[str, Any]:
    per_type: dict[int, dict[str, list[Any]]] = {}
    for type_index, cosine, rank in rows:
        entry = per_type.setdefault(type_index, {"cosine": [], "rank": []})
        entry["cosine"].append(round(cosine, 3))
        entry["rank"].append(rank)
    return {
        "mean_cosine": _mean(c for _, c, _ in rows),
        "mean_rank": _mean(r for _, _, r in rows),
        "median_rank": statistics.median(r for _, _, r in rows),
        "share_fix_in_dense_top5": _mean(r <= TOP for _, _, r in rows),
        "per_type": [{"type": t, **v} for t, v in sorted(per_type.items())],
    }


def describe(workload: Workload) -> dict[str, Any]:
    """The workload's shape, its digest and one type's notes and questions."""
    roles = Counter(n.role for n in workload.notes)
    first = workload.types[0]
    return {
        "seed": workload.seed,
        "types": len(workload.types),
        "notes": {"total": len(workload.notes), **dict(sorted(roles.items()))},
        "problem_words_per_type": learning_workload.PROBLEM_WORDS,
        "fixing_words_per_type": learning_workload.FIXING_WORDS,
        "question_templates": len(learning_workload.QUESTION_TEMPLATES),
        "held_out_only_templates": workload.held_out_only_templates,
        "synonym_templates": len(learning_workload.SYNONYM_TEMPLATES),
        "synonym_wordings_per_type": learning_workload.SYNONYM_WORDINGS,
        "synonym_table": len(learning_workload.SYNONYMS),
        "synonym_overlaps": len(learning_workload.synonym_overlaps(workload)),
        "fingerprint": workload.fingerprint(),
        "example": {
            "problem_words": first.problem_words,
            "fixing_words": first.fixing_words,
            "notes": [n.text for n in workload.notes if n.type_index == first.index],
            "training": [q.text for q in first.training],
            "held_out": [q.text for q in first.held_out],
            "synonyms": {w: learning_workload.SYNONYMS[w] for w in first.problem_words},
            "synonym_wordings": [q.text for q in first.synonyms],
        },
    }


# -- LoCoMo transfer -----------------------------------------------------------
#
# One split of a conversation's questions mixes the effect of feedback with the luck
# of which questions landed together: on LoCoMo dev the gain of one split moves by
# about as much as its own interval is wide. So the split is repeated, two-fold
# (each half teaches, the other is read; Dietterich's 5x2 cross-validation): every
# question is held out exactly once per repetition, and its gain is the mean over
# its repetitions. Intervals resample questions, each with all its folds, so a
# question read five times weighs as one. Fold 0 is the single split of earlier
# reports, drawn by the same hashes.
REPEATS = 5


def _key(seed: int, index: int) -> str:
    """The hash key of a repetition's split or a fold's random draw: the seed alone for
    the first, so the first fold is the single split earlier reports drew."""
    return str(seed) if index == 0 else f"{seed}.{index}"


def split_questions(questions: Sequence[locomo.Question], seed: int, repetition: int = 0) -> Halves:
    """Training and held-out halves: sorted by a seeded hash of the text, alternating."""
    key = _key(seed, repetition)

    def digest(q: locomo.Question) -> str:
        return hashlib.sha256(f"{key}\n{q.text}".encode()).hexdigest()

    ordered = sorted(questions, key=lambda q: (digest(q), q.text))
    return ordered[0::2], ordered[1::2]


def folds(questions: Sequence[locomo.Question], seed: int, repeats: int) -> list[Halves]:
    """Each repetition's split, then the same split the other way round: every question
    is held out once per repetition."""
    chosen = []
    for repetition in range(repeats):
        train, held = split_questions(questions, seed, repetition)
        chosen += [(train, held), (held, train)]
    return chosen


def evidence_recall(
    mem: Memory,
    questions: Sequence[locomo.Question],
    dia_of: dict[str, str],
    tick: Callable[[], None],
) -> list[tuple[float, list[tuple[str, str]]]]:
    """recall@10 of each question's evidence turns, and the read's (turn, source) pairs."""
    found = []
    for q in questions:
        ranked = [(dia_of[i.id], i.source) for i in mem.read(q.text, k=READ_K).items]
        turns = {dia for dia, _ in ranked}
        found.append((len(turns & set(q.evidence)) / len(q.evidence), ranked))
        tick()
    return found


Newcomers = dict[str, Counter[str]]  # source -> {"evidence": n, "other": n}


def newcomers(
    held: Sequence[locomo.Question],
    before: Sequence[Sequence[tuple[str, str]]],
    after: Sequence[Sequence[tuple[str, str]]],
    into: Newcomers,
) -> None:
    """Count the turns feedback brought into each held-out read's top 10, by the arm
    that brought them and whether they are the question's evidence: how precise what
    was taught is on questions it was not taught for."""
    for q, untaught, taught in zip(held, before, after, strict=True):
        was = {dia for dia, _ in untaught}
        for dia, source in taught:
            if dia not in was:
                kind = "evidence" if dia in q.evidence else "other"
                into.setdefault(source, Counter())[kind] += 1


def scored(conversation: locomo.Conversation) -> list[locomo.Question]:
    """A conversation's category 1-4 questions."""
    return [q for q in conversation.questions if q.category in locomo.SCORED]


# The reads of a held-out half: its store untaught, taught the other half's evidence,
# and taught as many random turns.
SYSTEMS = ("no_feedback", "feedback", "random")
Recalls = dict[str, float]  # system -> recall@10 of one held-out read


def transfer_conversation(
    conversation: locomo.Conversation,
    folder: Path,
    embedder: Embedder | None,
    seed: int,
    repeats: int,
    progress: Any,
    arrivals: Newcomers,
) -> list[list[Recalls | None]]:
    """Per fold, the no-feedback, feedback and random-feedback recall@10 of each held-out
    question, indexed like `scored(conversation)`: None where the fold trained on it.
    What feedback brought into the held-out reads is counted into ``arrivals``."""
    questions = scored(conversation)
    index = {id(q): n for n, q in enumerate(questions)}  # a fold's halves hold these objects
    base = folder / f"{conversation.sample_id}.db"
    mem, dia_of = locomo.index_assocmem(conversation, str(base), embedder, LOCOMO_PROFILE)
    mem.close()
    by_dia = {dia: memory_id for memory_id, dia in dia_of.items()}
    # Turns are drawn by their place in the conversation: memory ids written in the
    # same millisecond sort in no fixed order, so a draw over them differs per run.
    turns = [t.dia_id for t in conversation.turns if t.dia_id in by_dia]

    def tick() -> None:
        locomo.step(progress, conversation.sample_id)

    per_fold = []
    for fold, (train, held) in enumerate(folds(questions, seed, repeats)):
        rng = random.Random(f"{_key(seed, fold)}:locomo:{conversation.sample_id}")
        plans = {
            "no_feedback": [],
            "feedback": [(q.text, [by_dia[e] for e in q.evidence]) for q in train],
            "random": [
                (q.text, [by_dia[d] for d in rng.sample(turns, len(q.evidence))]) for q in train
            ],
        }
        reads: list[Recalls] = [{} for _ in held]
        ranked: dict[str, list[list[tuple[str, str]]]] = {}
        for name, steps in plans.items():
            path = copy_store(base, folder / f"{conversation.sample_id}-{fold}-{name}.db")
            with Memory(
                str(path), agent_id="locomo", embedder=embedder, profile=LOCOMO_PROFILE
            ) as copy:
                teach(copy, steps, tick)
                found = evidence_recall(copy, held, dia_of, tick)
                for read, (recall, _) in zip(reads, found, strict=True):
                    read[name] = recall
                ranked[name] = [items for _, items in found]
            for leftover in path.parent.glob(f"{path.name}*"):
                leftover.unlink()  # ten folds of copies would fill a small temp disk
        newcomers(held, ranked["no_feedback"], ranked["feedback"], arrivals)
        row: list[Recalls | None] = [None] * len(questions)
        for q, read in zip(held, reads, strict=True):
            row[index[id(q)]] = read
        per_fold.append(row)
    return per_fold


def bootstrap_ci(diffs: Sequence[float], rng: Any) -> list[float] | None:
    """95% percentile interval of the mean of paired differences."""
    import numpy

    if not diffs:
        return None
    values = numpy.asarray(diffs, dtype=float)
    means = values[rng.integers(0, len(values), size=(RESAMPLES, len(values)))].mean(axis=1)
    low, high = numpy.percentile(means, [2.5, 97.5])
    return [round(float(low), 3), round(float(high), 3)]


def transfer_table(rows: Sequence[tuple[int, Recalls]], seed: int) -> dict[str, Any]:
    """Per category and overall: each system's recall@10 and the paired gains with CIs
    (a row is one question: its recalls, each averaged over the folds that held it out)."""
    import numpy

    rng = numpy.random.default_rng(seed)
    groups = {
        f"{c} {locomo.CATEGORIES[c]}": [r for cat, r in rows if cat == c]
        for c in locomo.SCORED
        if any(cat == c for cat, _ in rows)
    }
    groups["overall(1-4)"] = [r for _, r in rows]
    table = {}
    for name, group in groups.items():
        block: dict[str, Any] = {"n": len(group)}
        for system in SYSTEMS:
            block[system] = _mean(r[system] for r in group)
        for system, label in (("feedback", "gain"), ("random", "random_gain")):
            diffs = [r[system] - r["no_feedback"] for r in group]
            block[label] = {"mean": _mean(diffs), "ci95": bootstrap_ci(diffs, rng)}
        table[name] = block
    return table


def _averaged(reads: Sequence[Recalls]) -> Recalls:
    return {s: statistics.fmean(r[s] for r in reads) for s in SYSTEMS}


def locomo_transfer(
    path: str,
    conversations: Sequence[str] | None,
    folder: Path,
    embedder: Embedder | None,
    seed: int,
    say: Any,
    repeats: int = REPEATS,
) -> dict[str, Any]:
    """The LoCoMo split-half feedback transfer over every (chosen) conversation, on
    ``repeats`` two-fold splits (see `REPEATS`)."""
    began = time.perf_counter()
    rows: list[tuple[int, Recalls]] = []
    fold_rows: list[list[tuple[int, Recalls]]] = [[] for _ in range(2 * repeats)]
    per_conversation = {}
    loaded = locomo.load(path, conversations)
    # Per repetition every question is taught twice (feedback, random) and read three
    # times (no feedback, feedback, random).
    total = sum(5 * repeats * len(scored(c)) for c in loaded)
    progress = progress_bar(total, desc="locomo transfer", unit="read")
    arrivals: Newcomers = {}
    for conversation in loaded:
        per_fold = transfer_conversation(
            conversation, folder, embedder, seed, repeats, progress, arrivals
        )
        questions = scored(conversation)
        mine = [
            (q.category, _averaged([r for fold in per_fold if (r := fold[n]) is not None]))
            for n, q in enumerate(questions)
        ]
        for fold, found in zip(fold_rows, per_fold, strict=True):
            pairs = zip(questions, found, strict=True)
            fold.extend((q.category, r) for q, r in pairs if r is not None)
        rows.extend(mine)
        per_conversation[conversation.sample_id] = {
            "questions": len(mine),
            **{s: _mean(r[s] for _, r in mine) for s in SYSTEMS},
        }
        say(f"locomo {conversation.sample_id}: {per_conversation[conversation.sample_id]}")
    progress.close()
    table = transfer_table(rows, seed)
    by_fold = [transfer_table(found, seed)["overall(1-4)"] for found in fold_rows]
    say(f"locomo overall, {repeats} two-fold repetitions: {table.get('overall(1-4)')}")
    say(f"locomo turns feedback brought into held-out top 10s, by arm: {arrivals}")
    return {
        "data": Path(path).name,
        "k": READ_K,
        "resamples": RESAMPLES,
        "repeats": repeats,
        "recall@10": table,
        "folds": [
            {
                "repetition": n // 2,
                "held_out": "second half" if n % 2 == 0 else "first half",
                **block,
            }
            for n, block in enumerate(by_fold)
        ],
        "per_conversation": per_conversation,
        "feedback_newcomers": {
            source: dict(sorted(counts.items())) for source, counts in sorted(arrivals.items())
        },
        "seconds": _since(began),
    }


# -- the run -------------------------------------------------------------------


def embedder_names(value: str | Sequence[str | None] | None) -> list[str | None]:
    """The embedders to measure, in order: a name, several comma-separated, or a list
    (``none`` or None: no embedder)."""
    items = [value] if value is None else value.split(",") if isinstance(value, str) else value
    names = [None if name is None or name.strip() == "none" else name.strip() for name in items]
    if len(set(names)) != len(names):
        raise ValueError(f"an embedder is named twice in {value!r}")
    return names


def run(
    out: str,
    *,
    seed: int = 0,
    types: int = 40,
    notes: int = 2000,
    embedder_name: str | Sequence[str | None] | None = "minilm",
    locomo_path: str | None = None,
    conversations: Sequence[str] | None = None,
    outcomes: Sequence[int] = (0, 1, 2, 3, 5),
    repeats: int = REPEATS,
    noise: Sequence[float] = NOISE,
) -> dict[str, Any]:
    """Run the benchmark and write the JSON report to ``out``; returns the report. With
    one embedder the report is that embedder's section; with several, it holds one
    section per embedder under ``embedders`` (keyed by name, ``none`` for none)."""
    start = time.perf_counter()
    names = embedder_names(embedder_name)
    workload = learning_workload.generate(seed, types, notes)
    sections: dict[str, dict[str, Any]] = {}
    parts = len(names) * (3 if locomo_path else 2)
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-learning-") as tmp,
        progress_bar(parts, desc="learning bench", unit="part") as bar,
    ):
        for name in names:
            folder = Path(tmp) / (name or "none")
            folder.mkdir()
            args = (workload, folder, name, outcomes, noise, seed, bar)
            sections[name or "none"] = embedder_section(*args, locomo_path, conversations, repeats)
    if len(names) == 1:
        report = next(iter(sections.values()))
    else:
        report = {
            "config": {"seed": seed, "types": types, "notes": notes, "embedders": list(sections)},
            "embedders": sections,
            "seconds": {"total": _since(start)},
        }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"[{_since(start):6.1f}s] done; wrote {out}", file=sys.stderr, flush=True)
    return report


def embedder_section(
    workload: Workload,
    folder: Path,
    embedder_name: str | None,
    outcomes: Sequence[int],
    noise: Sequence[float],
    seed: int,
    bar: Any,
    locomo_path: str | None,
    conversations: Sequence[str] | None,
    repeats: int,
) -> dict[str, Any]:
    """Every section of one embedder (or none): its store, conditions and LoCoMo part."""
    start = time.perf_counter()
    embedder = CachedEmbedder(load_embedder(embedder_name)) if embedder_name else None
    seconds: dict[str, float] = {}
    id_of = build_store(workload, folder / "base.db", embedder)
    ctx = Context(workload, folder, embedder, embedder_name, folder / "base.db", id_of, start)
    seconds["build"] = _since(start)
    ctx.say(f"built {len(workload.notes)} notes, {len(workload.types)} types ({seconds['build']}s)")
    bar.update(1)
    report = _learning_sections(ctx, outcomes, noise, seed, seconds)
    bar.update(1)
    if locomo_path:
        report["locomo"] = locomo_transfer(
            locomo_path, conversations, folder, embedder, seed, ctx.say, repeats
        )
        seconds["locomo"] = report["locomo"]["seconds"]
        bar.update(1)
    seconds["total"] = _since(start)
    report["seconds"] = seconds
    return report


def _learning_sections(
    ctx: Context,
    outcomes: Sequence[int],
    noise: Sequence[float],
    seed: int,
    seconds: dict[str, float],
) -> dict[str, Any]:
    """Every section of the generated workload, in the report's key order."""
    began = time.perf_counter()
    workload = describe(ctx.workload)
    baseline, workload["dense_check"] = baselines(ctx)
    seconds["baselines"] = _since(began)
    began = time.perf_counter()
    taught = outcome_conditions(ctx, outcomes, seed, noise)
    reads, paths = taught.pop("_reads"), taught.pop("_paths")
    figures, steps = taught.pop("_figures"), taught.pop("_steps")
    if RESTART_OUTCOMES not in reads:
        paths[RESTART_OUTCOMES], reads[RESTART_OUTCOMES] = condition(
            ctx, "restart", fixing_steps(ctx, RESTART_OUTCOMES)
        )
    seconds["outcomes"] = _since(began)
    timed = LATENCY_OUTCOMES if LATENCY_OUTCOMES in paths else max(paths)
    report = {
        "environment": environment(
            embedder=ctx.embedder.model_id if ctx.embedder else None,
            backend="sqlite",
            sqlite=sqlite3.sqlite_version,
        ),
        "config": {
            "seed": seed,
            "types": len(ctx.workload.types),
            "notes": len(ctx.workload.notes),
            "embedder": ctx.embedder_name,
            "outcomes": list(outcomes),
            "noise": list(noise),
            "read_k": READ_K,
            "top": TOP,
        },
        "workload": workload,
        **taught,
        "baselines": baseline,
        "nearest_past_question": nearest_past(ctx, steps),
        "restart": restart(ctx, paths[RESTART_OUTCOMES], reads[RESTART_OUTCOMES]),
        "rebuilt": rebuilt(ctx, reads[0]),
        "interference": interference(ctx, reads[0]),
        "latency": latency(ctx, paths[0], paths[timed], timed),
    }
    report["read_text"] = read_text_table(report, figures)
    seconds.update(
        {
            name: report[name]["seconds"]
            for name in ("restart", "rebuilt", "interference", "latency")
        }
    )
    return report


def _since(began: float) -> float:
    return round(time.perf_counter() - began, 1)
