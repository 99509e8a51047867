"""Embedding speed of the three local forms of all-MiniLM-L6-v2: load, throughput, latency.

For each form (`MiniLMTorch`, `MiniLMOnnx`, `MiniLMStatic`; the default
``minilm`` is the ONNX form on a new store) a fresh spawned process
imports and constructs the embedder (load time, imports included, as a CLI
user pays it), encodes 2,000 chat turns at the form's batch size and at a few
others (sentences/s), then embeds 200 turns one call at a time (single-query
latency). The ONNX and static forms are built into ``models_dir`` first when
missing, and the build is timed.

``threads`` sets the threads of each embedding call (default: the forms' own,
`local.EMBED_THREADS`; 0: torch's and onnxruntime's default pools, one thread
per core). Where another process keeps a core busy, those pools wait on each
other and a single query slows many times over. Compare runs by their recorded
load averages.

Turns are synthetic by default, generated to LoCoMo's length (mean 23 words,
32 MiniLM tokens per turn); ``corpus`` points at a LoCoMo-format JSON file to
use real turns instead. Synthetic turns ran within 30 % of LoCoMo's: faster
for the transformer forms (their lengths vary less, so batches pad less),
slower for the static model.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assocmem.errors import DependencyMissing, EmbedderUnavailable
from assocmem.progress import track
from assocmem.vectors import local as local_embedders
from assocmem.vectors.embedders import Embedder

from .measure import environment, percentile

TURNS = 2_000
SINGLE_CALLS = 200
SEED = 7
# Warm-up texts before any timing: the first call allocates buffers and, for
# torch, picks kernels.
WARMUP = 64
# Batch sizes tried besides each form's default, to justify the defaults.
# The ONNX form runs texts one at a time, so its batch size changes nothing.
BATCH_SWEEP = {
    "minilm-torch": (32, 64, 128, 256),
    "minilm-onnx": (),
    "minilm-static": (64, 256, 1024),
}

_OPENERS = ["Hey!", "Oh wow,", "Honestly,", "Yeah,", "So", "Haha,", "Thanks,", "Good to hear,",
            "That sounds great!", "I know, right?", "Ugh,", "Guess what,"]  # fmt: skip
_SUBJECTS = ["I", "my sister", "we", "the kids", "my partner", "our neighbour", "my boss",
             "the team", "my friend from college", "Grandma"]  # fmt: skip
_VERBS = ["went to", "finally finished", "signed up for", "talked about", "started", "loved",
          "had trouble with", "painted", "booked", "cancelled", "planned",
          "can't stop thinking about"]  # fmt: skip
_OBJECTS = ["a pottery class", "the camping trip in the mountains", "that new Thai place downtown",
            "the charity run last weekend", "a support group meeting", "the garden shed",
            "our trip to Lisbon", "a violin lesson", "the job interview", "the adoption paperwork",
            "a sunrise painting", "the book club", "the marathon training plan",
            "the kitchen renovation"]  # fmt: skip
_TAILS = ["yesterday", "last week", "this morning", "after work", "with the kids",
          "and it was so much fun", "and it really helped", "but it rained the whole time",
          "because it felt important", "even though I was nervous"]  # fmt: skip
_QUESTIONS = ["What about you?", "How have you been?", "Any plans for the weekend?",
              "Did you ever try that?", "How's work going?", "What do you think?"]  # fmt: skip


def chat_turn(rng: random.Random) -> str:
    """One synthetic chat turn: an opener, one to three clauses, maybe a question."""
    clauses = [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_TAILS)}"
        for _ in range(rng.choice((1, 1, 2, 2, 3)))
    ]
    text = f"{rng.choice(_OPENERS)} {', and '.join(clauses)}."
    return f"{text} {rng.choice(_QUESTIONS)}" if rng.random() < 0.4 else text


def synthetic_turns(count: int, seed: int = SEED) -> list[str]:
    """``count`` reproducible synthetic chat turns."""
    rng = random.Random(seed)
    return [chat_turn(rng) for _ in range(count)]


def locomo_turns(path: Path, count: int) -> list[str]:
    """The first ``count`` turns of a LoCoMo-format file (a list of conversations)."""
    conversations = json.loads(path.read_text(encoding="utf-8"))
    turns = [
        turn["text"]
        for conversation in conversations
        for key, session in conversation["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return turns[:count]


FORMS: dict[str, Callable[..., Embedder]] = {
    "minilm-torch": local_embedders.MiniLMTorch,
    "minilm-onnx": local_embedders.MiniLMOnnx,
    "minilm-static": local_embedders.MiniLMStatic,
}
BUILDERS: dict[str, Callable[[Path], Path]] = {
    "minilm-onnx": local_embedders.build_onnx,
    "minilm-static": local_embedders.build_static,
}


def _rate(embedder: Embedder, texts: Sequence[str], batch_size: int) -> float:
    embedder.batch_size = batch_size
    start = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - start)


def _limit_threads(name: str, options: dict[str, Any], threads: int | None) -> dict[str, Any]:
    """Options for ``name`` that set its threads per call (the forms' own default otherwise)."""
    if threads is None or name == "minilm-static":
        return options
    return options | {"threads": threads or None}


def measure(
    name: str, options: dict[str, Any], texts: Sequence[str], threads: int | None = None
) -> dict[str, Any]:
    """Load, throughput and latency of one form; run in a fresh process so imports count."""
    start = time.perf_counter()
    embedder = FORMS[name](**_limit_threads(name, options, threads))
    load_s = time.perf_counter() - start
    default_batch = embedder.batch_size
    embedder.embed(texts[:WARMUP])
    sweep = {str(size): round(_rate(embedder, texts, size)) for size in BATCH_SWEEP[name]}
    sweep[str(default_batch)] = round(_rate(embedder, texts, default_batch))
    embedder.batch_size = default_batch
    latencies = []
    for text in texts[:SINGLE_CALLS]:
        start = time.perf_counter()
        embedder.embed_one(text)
        latencies.append((time.perf_counter() - start) * 1000)
    return {
        "model_id": embedder.model_id,
        "dims": embedder.dims,
        "load_s": round(load_s, 2),
        "batch_size": default_batch,
        "sentences_per_s": sweep[str(default_batch)],
        "sentences_per_s_by_batch": sweep,
        "single_p50_ms": round(percentile(latencies, 0.50), 2),
        "single_p95_ms": round(percentile(latencies, 0.95), 2),
    }


def _ensure_built(name: str, folder: Path) -> float | None:
    """Build ``name`` into ``folder`` unless it loads already; the build's seconds, or None."""
    try:
        FORMS[name](model_dir=folder, **({"build": False} if name == "minilm-onnx" else {}))
        return None
    except EmbedderUnavailable:
        print(f"embed-speed: building {name} into {folder}…", file=sys.stderr)
        start = time.perf_counter()
        BUILDERS[name](folder)
        return round(time.perf_counter() - start, 1)


def run(
    out: str,
    models_dir: Path,
    *,
    corpus: Path | None = None,
    threads: int | None = None,
    forms: Sequence[str] = tuple(FORMS),
) -> dict[str, Any]:
    """Measure the local ``forms`` and write the JSON report to ``out``.

    ``threads`` sets the threads per call (None: the forms' default; 0: the
    libraries' default pools); the static model is single-threaded numpy either way. A form
    whose build needs a package that is not installed is reported as skipped.
    """
    texts = locomo_turns(corpus, TURNS) if corpus else synthetic_turns(TURNS)
    spawn = multiprocessing.get_context("spawn")
    results: dict[str, Any] = {}
    for name in track(forms, total=len(forms), desc="embed bench", unit="form"):
        options: dict[str, Any] = {}
        build_s = None
        if name in BUILDERS:
            options["model_dir"] = models_dir / name
            try:
                build_s = _ensure_built(name, models_dir / name)
            except DependencyMissing as exc:
                results[name] = {"skipped": str(exc)}
                continue
        print(f"embed-speed: measuring {name}…", file=sys.stderr)
        load_before = os.getloadavg()[0]
        with spawn.Pool(1) as pool:
            results[name] = pool.apply(measure, (name, options, texts, threads))
        # On a shared machine another process's load skews everything (torch's
        # thread pool suffers most): keep the evidence with the numbers.
        results[name]["loadavg_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        results[name]["build_s"] = build_s
    report = {
        "benchmark": "embed_speed",
        "environment": environment(),
        "corpus": str(corpus) if corpus else "synthetic",
        "threads": {None: "form default", 0: "library default pools"}.get(threads, threads),
        "turns": len(texts),
        "mean_words": round(statistics.fmean(len(t.split()) for t in texts), 1),
        "forms": results,
    }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", default="bench-embed-speed.json", help="where to write the JSON")
    parser.add_argument(
        "--models-dir",
        type=Path,
        default=None,
        help="where the ONNX and static forms are (built there when missing)",
    )
    parser.add_argument("--corpus", type=Path, default=None, help="a LoCoMo-format JSON file")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads per call (0: torch/onnxruntime default pools)",
    )
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated forms")
    args = parser.parse_args(argv)
    models_dir = args.models_dir or local_embedders.default_models_dir()
    forms = [f for f in args.forms.split(",") if f]
    report = run(args.out, models_dir, corpus=args.corpus, threads=args.threads, forms=forms)
    print(json.dumps(report["forms"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
