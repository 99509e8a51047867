"""LoCoMo retrieval benchmark: recall@k of evidence turns, assocmem against baselines.

Each conversation's turns are written to a fresh store ("Speaker: text", with the
shared image's caption when there is one; the session date as ``observed_at``;
speaker as ``author``; the session as ``thread``). Every question of categories
1-4 is asked of assocmem and of three baselines computed on the same turns in the
same run: BM25 alone (bm25s with the PyStemmer English stemmer and English stop
words), dense alone (the same embedder as assocmem, exact cosine), and their
Reciprocal Rank Fusion (k = 60). Category 5 (adversarial) is reported apart.

Beside the categories, every table has a slice ``no shared words``: the scored
questions (categories 1-4) whose evidence turns share no content word with them,
read with the BM25 baseline's own tokenizer (English stop words out, Snowball
stems) over what was said and the shared image's caption; the speaker's name is
the turn's author, not its words. There the words cannot find the evidence, and
what a system returns shows how far it finds by meaning alone.

assocmem runs once per recall profile asked for (default both): ``conversation``,
the transcript rules this corpus calls for, and ``general``, the default every
other store reads with. Each profile indexes its own store, since the speaker
label's place in a turn's vector is decided at write time; the report has a
section per profile under ``profiles``.

The data is read from the path given; nothing of it is copied anywhere. Malformed
evidence ids are repaired as the data's SOURCE.md describes (ids joined by ``;``
or spaces are split, ``D:11:26`` reads ``D11:26``, ``D30:05`` reads ``D30:5``);
ids that name no turn are counted as unmatched and dropped from the denominator,
and a question left with no evidence is counted and skipped.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar
from assocmem.vectors.embedders import Embedder, load_embedder

from . import oracle
from .measure import environment, percentile
from .stores import open_stores

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED = (1, 2, 3, 4)
NO_SHARED_WORDS = "no shared words"
PROFILES = ("conversation", "general")
RRF_K = 60
HYBRID_DEPTH = 100  # turns each baseline hands the hybrid's fusion


@dataclass
class Turn:
    dia_id: str
    text: str
    speaker: str
    session: int
    when: datetime
    said: str = ""  # the words of the turn (and its caption), without the speaker


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]
    shares_words: bool = True


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    repaired: int = 0
    unmatched: int = 0
    dropped: int = 0


@dataclass
class Scores:
    """recall@k per category for one system."""

    hits: dict[int, dict[int, list[float]]] = field(default_factory=dict)
    # the same, for the scored questions that share no word with their evidence
    unshared: dict[int, list[float]] = field(default_factory=dict)

    def add(self, question: Question, ranked: Sequence[str]) -> None:
        self.add_found(question, {k: set(ranked[:k]) for k in KS})

    def add_found(self, question: Question, found: dict[int, set[str]]) -> None:
        """Score what a system found at each k (a set, not a ranking)."""
        wanted = set(question.evidence)
        for k in KS:
            share = len(wanted & found[k]) / len(wanted)
            self.hits.setdefault(question.category, {}).setdefault(k, []).append(share)
            if question.category in SCORED and not question.shares_words:
                self.unshared.setdefault(k, []).append(share)

    def merge(self, other: Scores) -> None:
        for category, by_k in other.hits.items():
            for k, values in by_k.items():
                self.hits.setdefault(category, {}).setdefault(k, []).extend(values)
        for k, values in other.unshared.items():
            self.unshared.setdefault(k, []).extend(values)

    def table(self) -> dict[str, dict[str, float | int]]:
        result = {f"{c} {CATEGORIES[c]}": _block(self.hits[c]) for c in sorted(self.hits)}
        scored = [c for c in SCORED if c in self.hits]
        if scored:
            merged = {k: [v for c in scored for v in self.hits[c][k]] for k in KS}
            result["overall(1-4)"] = _block(merged)
        if self.unshared:
            result[NO_SHARED_WORDS] = _block(self.unshared)
        return result


def _block(by_k: dict[int, list[float]]) -> dict[str, float | int]:
    block: dict[str, float | int] = {f"recall@{k}": round(statistics.fmean(by_k[k]), 4) for k in KS}
    block["n"] = len(by_k[KS[0]])
    return block


# -- loading -------------------------------------------------------------------


def parse_session_date(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an aware datetime (taken as UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: str, only: Sequence[str] | None = None) -> list[Conversation]:
    """Conversations from a LoCoMo-format file, optionally only some sample ids."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = [_conversation(entry) for entry in data]
    if only:
        conversations = [c for c in conversations if c.sample_id in set(only)]
    return conversations


def session_turns(talk: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], str]]:
    """Each turn of a LoCoMo conversation, session by session: its session number, the
    turn, and what it said (its text, and the image it shared, by its caption)."""
    sessions = sorted(int(m.group(1)) for key in talk if (m := re.fullmatch(r"session_(\d+)", key)))
    for number in sessions:
        for turn in talk[f"session_{number}"]:
            said = turn["text"]
            if turn.get("blip_caption"):
                said += f" [shares {turn['blip_caption']}]"
            yield number, turn, said


def _conversation(entry: dict[str, Any]) -> Conversation:
    talk = entry["conversation"]
    words = _content_words()
    dates: dict[int, datetime] = {}
    turns = []
    for number, turn, said in session_turns(talk):
        if number not in dates:
            dates[number] = parse_session_date(talk[f"session_{number}_date_time"])
        text = f"{turn['speaker']}: {said}"
        turns.append(Turn(turn["dia_id"], text, turn["speaker"], number, dates[number], said))
    conversation = Conversation(entry["sample_id"], turns, [])
    known = {t.dia_id for t in turns}
    spoken = {t.dia_id: words(t.said) for t in turns}
    for qa in entry["qa"]:
        evidence, repaired = repair_evidence(qa.get("evidence", []))
        matched = [e for e in evidence if e in known]
        conversation.repaired += repaired
        conversation.unmatched += len(evidence) - len(matched)
        if not matched:
            conversation.dropped += 1
            continue
        shares = bool(words(qa["question"]) & set().union(*(spoken[e] for e in matched)))
        conversation.questions.append(
            Question(qa["question"], int(qa["category"]), matched, shares)
        )
    return conversation


def _content_words() -> Callable[[str], set[str]]:
    """The BM25 baseline's reading of a text as a set of words: English stop words
    out, the rest as Snowball stems."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")

    def words(text: str) -> set[str]:
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)
        return set(stemmer.stemWords(tokens[0]))

    return words


def repair_evidence(raw: Iterable[str]) -> tuple[list[str], int]:
    """Evidence ids as SOURCE.md says to read them; also how many needed repair."""
    ids, repaired = [], 0
    for entry in raw:
        parts = [p for p in re.split(r"[;\s,]+", str(entry)) if p]
        repaired += len(parts) > 1
        for part in parts:
            fixed = re.sub(r"^D:(\d+)", r"D\1", part)
            fixed = re.sub(r":0+(\d)", r":\1", fixed)
            repaired += fixed != part
            ids.append(fixed)
    return list(dict.fromkeys(ids)), repaired


# -- systems -------------------------------------------------------------------


def index_assocmem(
    conversation: Conversation,
    target: str,
    embedder: Embedder | None,
    profile: str = "conversation",
) -> tuple[Memory, dict[str, str]]:
    """A fresh store at ``target`` holding the conversation, read and embedded under
    ``profile``; returns it and memory id → dia_id."""
    mem = Memory(target, agent_id="locomo", embedder=embedder, profile=profile)
    results = mem.write_many(
        [
            {
                "text": t.text,
                "author": t.speaker,
                "thread": f"session_{t.session}",
                "observed_at": t.when,
                "meta": {"dia_id": t.dia_id, "session": t.session, "speaker": t.speaker,
                         "date": t.when.date().isoformat()},
            }
            for t in conversation.turns
        ]
    )  # fmt: skip
    ids = {r.id: t.dia_id for r, t in zip(results, conversation.turns, strict=True) if r.id}
    return mem, ids


class Baselines:
    """BM25, dense and their RRF fusion over one conversation's turns."""

    def __init__(self, turns: Sequence[Turn], embedder: Embedder | None) -> None:
        import bm25s
        import Stemmer

        self.dia_ids = [t.dia_id for t in turns]
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25s = bm25s
        corpus = bm25s.tokenize(
            [t.text for t in turns], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self.bm25 = bm25s.BM25()
        self.bm25.index(corpus, show_progress=False)
        self.embedder = embedder
        self.vectors = embedder.embed([t.text for t in turns]) if embedder else None

    def rank_bm25(self, question: str, depth: int) -> list[str]:
        tokens = self._bm25s.tokenize(
            [question], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        if not tokens.vocab:
            return []
        docs, scores = self.bm25.retrieve(
            tokens, k=min(depth, len(self.dia_ids)), show_progress=False
        )
        return [self.dia_ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def rank_dense(self, question: str, depth: int) -> list[str]:
        if self.embedder is None or self.vectors is None:
            return []
        import numpy

        scores = self.vectors @ self.embedder.embed_one(question)
        order = numpy.argsort(-scores, kind="stable")[:depth]
        return [self.dia_ids[int(i)] for i in order]

    def rank_all(self, question: str, depth: int) -> dict[str, list[str]]:
        """``depth`` turns from each baseline; the question is embedded once for all."""
        dense = self.rank_dense(question, max(depth, HYBRID_DEPTH))  # a stable order: cut
        fused: dict[str, float] = {}
        for ranking in (self.rank_bm25(question, HYBRID_DEPTH), dense[:HYBRID_DEPTH]):
            for rank, dia_id in enumerate(ranking, start=1):
                fused[dia_id] = fused.get(dia_id, 0.0) + 1.0 / (RRF_K + rank)
        return {
            "bm25": self.rank_bm25(question, depth),
            "dense": dense[:depth],
            "hybrid": sorted(fused, key=lambda d: (-fused[d], d))[:depth],
        }


# -- the run -------------------------------------------------------------------


def step(progress: Any, note: str) -> None:
    """Advance a bench's `assocmem.progress` bar by one, showing what it is on."""
    progress.set_postfix_str(note, refresh=False)
    progress.update(1)


def run(
    data: str,
    out: str,
    *,
    conversations: Sequence[str] | None = None,
    embedder_name: str | None = "minilm",
    embedder_options: dict[str, Any] | None = None,
    baselines: bool = True,
    read_options: dict[str, Any] | None = None,
    prepare: Callable[[Memory, Conversation], None] | None = None,
    declare: str | None = None,
    db: str = "sqlite",
    profiles: Sequence[str] = PROFILES,
) -> dict[str, Any]:
    """Run the benchmark and write the JSON report to ``out``; returns the report.

    ``profiles`` names the recall profiles assocmem is scored under, each in a
    section of ``report["profiles"]``. ``declare="oracle"`` also declares the oracle
    graph (see `oracle`) and scores `Memory.reconstruct` next to the plain read as
    ``reconstruct``. ``db`` names the backend the stores live on (see `stores`).
    """
    loaded = load(data, conversations)
    embedder = load_embedder(embedder_name, **(embedder_options or {})) if embedder_name else None
    ours = ["assocmem", *(("reconstruct",) if declare == "oracle" else ())]
    systems = [
        *(f"{profile}:{name}" for profile in profiles for name in ours),
        *(("bm25", "dense", "hybrid") if baselines else ()),
    ]
    declared: dict[str, Any] = {}
    totals = {name: Scores() for name in systems}
    per_conversation: dict[str, Any] = {}
    latencies: dict[str, list[float]] = {profile: [] for profile in profiles}
    index_seconds: dict[str, dict[str, float]] = {profile: {} for profile in profiles}
    total = sum(len(c.questions) for c in loaded) * (len(profiles) + baselines)
    with open_stores(db) as stores, progress_bar(total, desc="locomo", unit="q") as progress:
        backend = stores.describe()
        for conversation in loaded:
            scores = {name: Scores() for name in systems}
            for profile in profiles:
                start = time.perf_counter()
                target = stores.new(f"{conversation.sample_id}-{profile}")
                mem, dia_of = index_assocmem(conversation, target, embedder, profile)
                if prepare is not None:
                    prepare(mem, conversation)
                if declare == "oracle":
                    by_dia = {dia: memory_id for memory_id, dia in dia_of.items()}
                    declared[conversation.sample_id] = oracle.declare(mem, conversation, by_dia)
                index_seconds[profile][conversation.sample_id] = round(
                    time.perf_counter() - start, 2
                )
                for question in conversation.questions:
                    start = time.perf_counter()
                    result = mem.read(question.text, k=max(KS), **(read_options or {}))
                    latencies[profile].append((time.perf_counter() - start) * 1000)
                    ranked = [dia_of[item.id] for item in result.items]
                    scores[f"{profile}:assocmem"].add(question, ranked)
                    if declare == "oracle":
                        scores[f"{profile}:reconstruct"].add_found(
                            question, _reconstructed(mem, question.text, dia_of)
                        )
                    step(progress, f"{conversation.sample_id} {profile}")
                mem.close()
            if baselines:
                base = Baselines(conversation.turns, embedder)
                for question in conversation.questions:
                    for name, ranked in base.rank_all(question.text, max(KS)).items():
                        scores[name].add(question, ranked)
                    step(progress, f"{conversation.sample_id} baselines")
            per_conversation[conversation.sample_id] = _sections(scores, profiles, ours)
            for name in systems:
                totals[name].merge(scores[name])
    report: dict[str, Any] = _sections(totals, profiles, ours)
    for profile in profiles:
        report["profiles"][profile]["timings"] = {
            "index_seconds": index_seconds[profile],
            "query_p50_ms": _p(latencies[profile], 0.5),
            "query_p95_ms": _p(latencies[profile], 0.95),
        }
    report.update(
        per_conversation=per_conversation,
        evidence={
            "repaired_ids": sum(c.repaired for c in loaded),
            "unmatched_ids_dropped": sum(c.unmatched for c in loaded),
            "questions_without_evidence_skipped": sum(c.dropped for c in loaded),
        },
        environment=environment(embedder=embedder.model_id if embedder else None, **backend),
        declared=declared or None,
        data=str(Path(data).name),
    )
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _sections(
    scores: dict[str, Scores], profiles: Sequence[str], ours: Sequence[str]
) -> dict[str, Any]:
    """The tables: assocmem's per profile under ``profiles``, each baseline by name."""
    section: dict[str, Any] = {
        "profiles": {p: {name: scores[f"{p}:{name}"].table() for name in ours} for p in profiles}
    }
    section.update((name, s.table()) for name, s in scores.items() if ":" not in name)
    return section


def _p(latencies: list[float], share: float) -> float | None:
    if not latencies:
        return None
    value = statistics.median(latencies) if share == 0.5 else percentile(latencies, share)
    return round(value, 2)


def _reconstructed(mem: Memory, question: str, dia_of: dict[str, str]) -> dict[int, set[str]]:
    """dia_ids a reconstruction surfaces within its top k items (heads and evidence)."""
    result = mem.reconstruct(question, count=max(KS), max_hops=1)
    found: dict[int, set[str]] = {}
    for k in KS:
        refs = {i.ref for i in result.items[:k]} | {
            e.ref for i in result.items[:k] for e in i.evidence
        }
        found[k] = {dia_of[ref.removeprefix("mem:")] for ref in refs}
    return found
