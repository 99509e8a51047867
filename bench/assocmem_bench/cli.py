"""Registers the `assocmem bench` subcommands (entry point group ``assocmem.cli``)."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import core, embed_speed, hardening_bench, locomo, peers, scale

# Every bench's flag for where its JSON goes, and the --backend choice of those that have one
# (``--db`` is the global flag for where a store is; a bench makes its own stores).
OUT_HELP = "where to write the JSON"
BACKEND_HELP = (
    "sqlite (files in a temporary folder), postgres (a throwaway embedded server) or the "
    "postgresql:// URL of a server's maintenance database (fresh databases made there)"
)


def _names(text: str) -> list[str]:
    """A comma-separated flag's values (argparse ``type``), empty ones dropped."""
    return [name for name in text.split(",") if name]


def _ints(text: str) -> list[int]:
    """A comma-separated flag's whole numbers (argparse ``type``)."""
    return [int(value) for value in _names(text)]


def _shares(text: str) -> list[float]:
    """A comma-separated flag's shares, each at least 0 and below 1 (argparse ``type``)."""
    values = [float(value) for value in _names(text)]
    if not all(0 <= value < 1 for value in values):
        raise argparse.ArgumentTypeError(f"each share must be in [0, 1), not {text}")
    return values


def _positive(text: str) -> int:
    """A whole number of at least 1 (argparse ``type``)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _seconds(text: str) -> float:
    """A duration in seconds, more than 0 (argparse ``type``)."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def _recorded(
    parser: argparse.ArgumentParser, handler: Callable[[argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    """``handler``, then its JSON given a ``run`` section: the command that reproduces it
    and the commit it ran at, so a figure quoted from the file can say how it was made."""

    def run(args: argparse.Namespace) -> int:
        # Read before the run: rewriting a tracked report is not a change to the code.
        commit = _commit()
        code = handler(args)
        if code != 0:  # a failed run's file, if any, is not its report
            return code
        out = Path(args.out)
        report = json.loads(out.read_text(encoding="utf-8"))
        report["run"] = {"command": _command(parser, args), "commit": commit}
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        return code

    return run


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The shortest command line that parses to ``args``: each flag not at its default."""
    words = parser.prog.split()
    for action in parser._actions:  # argparse lists a parser's flags nowhere public
        value: Any = getattr(args, action.dest, None)
        default = action.default
        if isinstance(default, str) and default != argparse.SUPPRESS and callable(action.type):
            default = action.type(default)  # argparse converts a string default the same way
        # SUPPRESS marks the command line's global flags (--json, -v, --log-level), which
        # change what is shown, not what is measured.
        if (
            not action.option_strings
            or action.dest == "help"
            or default == argparse.SUPPRESS
            or value == default
        ):
            continue
        flag = action.option_strings[-1]
        if isinstance(action, argparse._StoreTrueAction):
            words.append(flag)
        elif isinstance(action, argparse._AppendAction):
            words += [part for item in value for part in (flag, str(item))]
        elif isinstance(value, list):
            words += [flag, ",".join(str(item) for item in value)]
        else:
            words += [flag, str(value)]
    return shlex.join(words)


# What a bench writes, not what it runs: a report written into the checkout must not
# mark the next bench's report as made from uncommitted code.
OUTPUTS = "docs/benchmarks"


def _commit(checkout: Path = Path(__file__).parent) -> str | None:
    """The commit of the checkout holding ``checkout``, ``-dirty`` where a tracked file
    outside `OUTPUTS` has changed; None outside git."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(checkout), *args],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    if not head:
        return None
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ":/",
                  f":(top,exclude){OUTPUTS}")  # fmt: skip
    return head if changed == "" else f"{head}-dirty"  # None: git could not tell


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` and its subcommands to the assocmem CLI."""
    doc = "run a benchmark and write its results as JSON"
    parser = subparsers.add_parser("bench", help=doc, description=doc)
    benches = parser.add_subparsers(dest="bench", required=True)

    doc = "write throughput and read latency at each store size (10k and 100k by default)"
    p = benches.add_parser("core", help=doc, description=doc)
    p.add_argument(
        "--sizes", type=_ints, default="10000,100000",
        help=f"comma-separated store sizes; each filled store then gets {core.WRITTEN_ON_TOP:,}"
        " more memories written on top to time the write rates (so 300 builds"
        f" {300 + core.WRITTEN_ON_TOP:,})",
    )  # fmt: skip
    p.add_argument("--out", default="bench-core.json", help=OUT_HELP)
    p.add_argument("--backend", default="sqlite", help=BACKEND_HELP)
    p.set_defaults(handler=_recorded(p, _core))

    doc = "writes/s, read p50/p95, disk, RSS and open time from 10k to 1M memories"
    p = benches.add_parser("scale", help=doc, description=doc)
    p.add_argument(
        "--sizes", type=_ints, default="10000,100000", help="comma-separated store sizes"
    )
    p.add_argument("--out", default="bench-scale.json", help=OUT_HELP)
    p.add_argument(
        "--backend", type=_names, default="sqlite,postgres",
        help="comma-separated; each: " + BACKEND_HELP,
    )  # fmt: skip
    p.add_argument(
        "--embedder", default=scale.DEFAULT_EMBEDDER, help="embedder of the vector reads, or 'none'"
    )
    p.add_argument("--queries", type=int, default=scale.QUERIES, help="queries timed per read kind")
    p.set_defaults(handler=_recorded(p, _scale))

    doc = (
        "assocmem against cpersona, inspeximus, mem0 and hebbmem: interleaved A/B runs "
        "on a generated and a natural-English corpus"
    )
    p = benches.add_parser("peers", help=doc, description=doc)
    p.add_argument("--size", type=int, default=10_000, help="memories written, one call each")
    p.add_argument("--rounds", type=int, default=peers.ROUNDS, help="A/B pairs per peer")
    p.add_argument("--out", default="bench-peers.json", help=OUT_HELP)
    p.add_argument(
        "--peers", type=_names, default=",".join(peers.PEERS), help="comma-separated peers"
    )
    p.add_argument(
        "--peer-python", action="append", default=[], metavar="PEER=PYTHON",
        help="run PEER under another interpreter (its own virtual environment)",
    )  # fmt: skip
    p.add_argument("--queries", type=int, default=peers.QUERIES, help="queries timed per run")
    p.add_argument(
        "--corpora", type=_names, default=",".join(peers.CORPORA),
        help="comma-separated corpora: zipf-syllables (generated words) and natural "
        "(the turns and questions of --text-data); natural is skipped without --text-data",
    )  # fmt: skip
    p.add_argument(
        "--text-data", metavar="PATH",
        help="a LoCoMo-format JSON file whose turns are the natural corpus (read, not copied)",
    )  # fmt: skip
    p.set_defaults(handler=_recorded(p, _peers))

    doc = "recall@5/10/20 of evidence turns on a LoCoMo-format file, with baselines"
    p = benches.add_parser("locomo", help=doc, description=doc)
    p.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--out", default="bench-locomo.json", help=OUT_HELP)
    p.add_argument("--backend", default="sqlite", help=BACKEND_HELP)
    p.add_argument("--conversations", type=_names, help="comma-separated sample ids (default: all)")
    p.add_argument("--embedder", default="minilm", help="embedder name, or 'none'")
    p.add_argument("--model-dir", help="folder of a built embedder form")
    p.add_argument("--no-baselines", action="store_true", help="skip BM25/dense/hybrid")
    p.add_argument(
        "--declare", choices=["oracle"], help="declare the oracle graph; score reconstruct too"
    )
    p.add_argument(
        "--profiles", type=_names, default=",".join(locomo.PROFILES),
        help="comma-separated recall profiles to score assocmem under (default: both)",
    )  # fmt: skip
    p.set_defaults(handler=_recorded(p, _locomo))

    doc = "how strongly age and importance should move a ranking, on LoCoMo read in time"
    p = benches.add_parser("folds", help=doc, description=doc)
    p.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    p.add_argument("--out", default="bench-folds.json", help=OUT_HELP)
    p.add_argument("--backend", default="sqlite", help=BACKEND_HELP)
    p.add_argument("--conversations", type=_names, help="comma-separated sample ids (default: all)")
    p.add_argument("--embedder", default="none", help="embedder name, or 'none' (the default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the importance marks")
    p.set_defaults(handler=_recorded(p, _folds))

    doc = "whether feedback on outcomes reaches a reader's top 5 on held-out questions"
    p = benches.add_parser("learning", help=doc, description=doc)
    p.add_argument("--out", default="bench-learning.json", help=OUT_HELP)
    p.add_argument("--seed", type=int, default=0, help="seed of the generated workload")
    p.add_argument("--types", type=int, default=40, help="problem types")
    p.add_argument("--notes", type=int, default=2000, help="notes in the store")
    p.add_argument(
        "--embedder", default="minilm",
        help="embedder name, or 'none'; several, comma-separated, get a section each",
    )  # fmt: skip
    p.add_argument("--locomo", help="a LoCoMo-format file for the split-half transfer")
    p.add_argument("--conversations", type=_names, help="comma-separated sample ids (default: all)")
    p.add_argument(
        "--outcomes", type=_ints, default="0,1,2,3,5", help="comma-separated outcome counts"
    )
    p.add_argument(
        "--repeats", type=_positive, help="two-fold splits of the LoCoMo questions (default: 5)"
    )
    p.add_argument(
        "--noise", type=_shares, default="0.2,0.4",
        help="comma-separated shares of rating calls a noisy teacher gets wrong"
        " (default: %(default)s)",
    )  # fmt: skip
    p.set_defaults(handler=_recorded(p, _learning))

    doc = "whether what outcomes taught one wording reaches a rewording (hand-written problems)"
    p = benches.add_parser("rewordings", help=doc, description=doc)
    p.add_argument("--out", default="bench-rewordings.json", help=OUT_HELP)
    p.add_argument("--embedder", default="minilm", help="embedder name (default: %(default)s)")
    p.add_argument(
        "--notes", type=_positive, default=600, help="distractor notes (default: %(default)s)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the distractor notes")
    p.set_defaults(handler=_recorded(p, _rewordings))

    doc = "text-read latency of a large store untaught and taught through many rated reads"
    p = benches.add_parser("learning-scale", help=doc, description=doc)
    p.add_argument("--out", default="bench-learning-scale.json", help=OUT_HELP)
    p.add_argument("--notes", type=_positive, default=100_000, help="notes in the store")
    p.add_argument("--rated", type=_positive, default=10_000, help="rated reads in the taught copy")
    p.add_argument("--types", type=_positive, default=40, help="problem types")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated workload")
    p.add_argument("--embedder", help="embedder name (default: none)")
    p.set_defaults(handler=_recorded(p, _learning_scale))

    doc = "server load, crash recovery and fuzzing figures on 127.0.0.1"
    p = benches.add_parser("server", help=doc, description=doc)
    p.add_argument("--out", default="bench-server.json", help=OUT_HELP)
    p.add_argument("--clients", type=int, default=8, help="concurrent load clients")
    p.add_argument("--seconds", type=float, default=60.0, help="load duration")
    p.add_argument("--examples", type=int, default=50, help="fuzz cases per operation")
    p.set_defaults(handler=_recorded(p, _server))

    doc = "8 concurrent callers through Client, AsyncClient and MCP over HTTP, against urllib"
    p = benches.add_parser("clients", help=doc, description=doc)
    p.add_argument("--out", default="bench-clients.json", help=OUT_HELP)
    p.add_argument("--clients", type=_positive, default=8, help="concurrent callers")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each turn")
    p.add_argument("--rounds", type=_positive, default=3, help="turns of each transport")
    p.set_defaults(handler=_recorded(p, _clients))

    doc = "hardening: idle/flooding/oversized clients, writes racing forget, WAL under a snapshot"
    p = benches.add_parser("hardening", help=doc, description=doc)
    p.add_argument("--out", default="bench-hardening.json", help=OUT_HELP)
    p.add_argument(
        "--backend", type=_names, default="sqlite,postgres",
        help="backends of the race part, comma-separated (default: %(default)s); each: "
        + BACKEND_HELP,
    )  # fmt: skip
    p.add_argument(
        "--rounds", type=_positive, default=hardening_bench.ROUNDS,
        help="races of each operation against forget, per backend (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--seconds", type=_seconds, default=hardening_bench.SECONDS,
        help="duration of each flood (server part) and of the writes under a snapshot"
        " (wal part) (default: %(default)s)",
    )  # fmt: skip
    p.add_argument(
        "--only", type=_names, default=",".join(hardening_bench.PARTS),
        help="comma-separated parts to run (default: %(default)s)",
    )  # fmt: skip
    p.set_defaults(handler=_recorded(p, _hardening))

    doc = "write_many memories/s against raw sqlite3 inserts of the same rows, and its profile"
    p = benches.add_parser("ingest", help=doc, description=doc)
    p.add_argument("--out", default="bench-ingest.json", help=OUT_HELP)
    p.add_argument("--memories", type=_positive, default=10_000, help="memories written")
    p.add_argument("--batch", type=_positive, default=500, help="memories a write_many call")
    p.add_argument("--rounds", type=_positive, default=3, help="alternating runs of each side")
    p.set_defaults(handler=_recorded(p, _ingest))

    doc = "statements and write transactions behind one declaring write and one text read"
    p = benches.add_parser("statements", help=doc, description=doc)
    p.add_argument("--out", default="bench-statements.json", help=OUT_HELP)
    p.add_argument("--memories", type=int, default=1000, help="notes in the store read")
    p.add_argument(
        "--embedder", default="minilm", help="embedder of the read with lessons (default: minilm)"
    )
    p.set_defaults(handler=_recorded(p, _statements))

    doc = "index, re-index after a 1 % edit and relevant_notes latency on a generated vault"
    # argparse %-formats a subcommand's help (not its description)
    p = benches.add_parser("vault", help=doc.replace("%", "%%"), description=doc)
    p.add_argument("--out", default="bench-vault.json", help=OUT_HELP)
    p.add_argument("--notes", type=int, default=10_000, help="notes in the generated vault")
    p.add_argument("--queries", type=int, default=200, help="relevant_notes queries timed")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated vault")
    p.set_defaults(handler=_recorded(p, _vault))
    # the influence gate against an AgentPoison-style attack
    doc = "top-1 poison hijack raw vs influence_only, legit recall under the gate, the spoof"
    p = benches.add_parser("trust", help=doc, description=doc)
    p.add_argument("--sizes", type=_ints, default="1000,10000", help="comma-separated corpus sizes")
    p.add_argument("--out", default="bench-trust.json", help=OUT_HELP)
    p.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    p.set_defaults(handler=_recorded(p, _trust))

    # -- trust: attribution
    doc = "attribution: relabels and taint strips caught, a below-k drip capped by a budget"
    p = benches.add_parser("trust-attribution", help=doc, description=doc)
    p.add_argument("--out", default="bench-trust-attr.json", help=OUT_HELP)
    p.add_argument(
        "--horizons", type=_ints, default="50,100,200,400,800", help="drip lengths, comma-separated"
    )
    p.add_argument("--reversible", type=int, default=10_000, help="a good source's reversible uses")
    p.add_argument("--budget", type=float, default=10.0, help="each source's lifetime budget")
    p.set_defaults(handler=_recorded(p, _trust_attribution))
    # earned reinforcement
    doc = "value gained on top vs by a weak frequent false positive; drift with it off"
    p = benches.add_parser("reinforce", help=doc, description=doc)
    p.add_argument("--trials", type=int, default=10, help="independent generated stores")
    p.add_argument("--out", default="bench-reinforce.json", help=OUT_HELP)
    p.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    p.set_defaults(handler=_recorded(p, _reinforce))

    doc = "load time, sentences/s and query latency of the local embedder forms"
    p = benches.add_parser("embed", help=doc, description=doc)
    p.add_argument("--out", default="bench-embed.json", help=OUT_HELP)
    p.add_argument("--models-dir", help="where the built forms live (built if missing)")
    p.add_argument(
        "--forms", type=_names, default=",".join(embed_speed.FORMS), help="comma-separated forms"
    )
    p.add_argument(
        "--threads", type=int, help="threads per call (0: torch/onnxruntime default pools)"
    )
    p.set_defaults(handler=_recorded(p, _embed))

    doc = "vector reads scanned vs HNSW graphs: build, p50/p95, recall@10, the libraries compared"
    p = benches.add_parser("ann", help=doc, description=doc)
    p.add_argument(
        "--sizes", type=_ints, default="10000,100000", help="comma-separated vector counts"
    )
    p.add_argument("--out", default="bench-ann.json", help=OUT_HELP)
    p.add_argument("--embedder", default="minilm-static", help="the embedder of the vectors")
    p.add_argument(
        "--libraries", type=_names, default="faiss,usearch,hnswlib", help="ANN libraries compared"
    )
    p.add_argument(
        "--index-max", type=int, default=100_000, help="largest size the real store is filled to"
    )
    p.add_argument("--queries", type=int, default=300, help="queries timed per size")
    p.set_defaults(handler=_recorded(p, _ann))

    doc = "render the benchmarks page and its plots from the benches' JSON reports"
    p = benches.add_parser("render-docs", help=doc, description=doc)
    p.add_argument(
        "--results", default="docs/benchmarks/results", help="folder of the JSON reports"
    )
    p.add_argument("--out", default="docs/benchmarks", help="folder of the page and its plots")
    p.set_defaults(handler=_render_docs)  # writes no report of its own to record

    # consolidation
    doc = "keep-budget by value vs FIFO/random, dream-pass time, LoCoMo before/after"
    p = benches.add_parser("consolidate", help=doc, description=doc)
    p.add_argument("--out", default="bench-consolidate.json", help=OUT_HELP)
    p.add_argument("--size", type=int, default=100_000, help="memories the timed pass runs over")
    p.add_argument("--stream", type=int, default=2_000, help="memories of the budget stream")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    p.add_argument("--locomo", help="a LoCoMo-format file: recall before/after consolidate")
    p.add_argument("--conversations", type=_names, help="comma-separated sample ids (default: all)")
    p.add_argument("--embedder", default="none", help="embedder for --locomo, or 'none'")
    p.set_defaults(handler=_recorded(p, _consolidate))


def _show(args: argparse.Namespace, report: dict[str, Any], text: str) -> int:
    """Print ``text`` (a summary of ``report``), or under ``--json`` the whole report as
    one JSON document, as it was written to ``--out``."""
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


def _core(args: argparse.Namespace) -> int:
    report = core.run(args.sizes, args.out, db=args.backend)
    return _show(args, report, json.dumps(report["sizes"], indent=2))


def _scale(args: argparse.Namespace) -> int:
    report = scale.run(
        args.sizes,
        args.out,
        dbs=args.backend,
        embedder=args.embedder,
        queries=args.queries,
    )
    return _show(args, report, json.dumps(report["runs"], indent=2))


def _peers(args: argparse.Namespace) -> int:
    pythons = dict(pair.split("=", 1) for pair in args.peer_python)
    report = peers.run(
        args.out,
        size=args.size,
        rounds=args.rounds,
        peers=args.peers,
        pythons=pythons,
        queries=args.queries,
        corpora=args.corpora,
        text_data=args.text_data,
    )
    return _show(args, report, "\n".join(peers.lines(report)))


def _locomo(args: argparse.Namespace) -> int:
    options = {"model_dir": args.model_dir} if args.model_dir else {}
    report = locomo.run(
        args.data,
        args.out,
        conversations=args.conversations or None,
        embedder_name=None if args.embedder == "none" else args.embedder,
        embedder_options=options,
        baselines=not args.no_baselines,
        declare=args.declare,
        db=args.backend,
        profiles=args.profiles,
    )
    if args.json:
        return _show(args, report, "")
    rows = [
        (f"{name} ({profile})", table)
        for profile, section in report["profiles"].items()
        for name, table in section.items()
        if name != "timings"
    ]
    rows += [(name, report[name]) for name in ("bm25", "dense", "hybrid") if name in report]
    width = max(len(label) for label, _ in rows)
    for label, table in rows:
        row = {cat: block["recall@10"] for cat, block in table.items()}
        print(f"{label:{width}s} recall@10 " + "  ".join(f"{c}={v:.3f}" for c, v in row.items()))
    return 0


def _learning(args: argparse.Namespace) -> int:
    from . import learning  # imported when this bench runs

    report = learning.run(
        args.out,
        seed=args.seed,
        types=args.types,
        notes=args.notes,
        embedder_name=args.embedder,
        locomo_path=args.locomo,
        conversations=args.conversations or None,
        outcomes=args.outcomes,
        repeats=args.repeats or learning.REPEATS,
        noise=args.noise,
    )
    if args.json:
        return _show(args, report, "")
    sections = report.get("embedders") or {"": report}
    for name, section in sections.items():
        _learning_summary(f"{name}: " if name else "", section)
    return 0


def _rewordings(args: argparse.Namespace) -> int:
    from . import rewordings

    report = rewordings.run(args.out, embedder_name=args.embedder, notes=args.notes, seed=args.seed)
    if args.json:
        return _show(args, report, "")
    for n, figures in report["outcomes"].items():
        print(f"outcomes {n}: {json.dumps(figures)}")
    for name in ("interference_no_feedback", "interference"):
        print(f"{name}: {json.dumps(report[name])}")
    return 0


def _learning_scale(args: argparse.Namespace) -> int:
    from . import learning_scale

    report = learning_scale.run(
        args.out,
        notes=args.notes,
        rated=args.rated,
        types=args.types,
        seed=args.seed,
        embedder_name=args.embedder,
    )
    if args.json:
        return _show(args, report, "")
    for name in ("no_feedback", "taught"):
        print(f"{name}: text read p50 {report[name]['p50_ms']} ms, p95 {report[name]['p95_ms']} ms")
    print(f"taught / untaught: p50 {report['p50_ratio']}x, p95 {report['p95_ratio']}x")
    return 0


def _learning_summary(prefix: str, report: dict[str, Any]) -> None:
    """A few lines of one embedder's section: text recall@5 by n for each condition."""
    from . import learning

    for n, figures in report["outcomes"].items():
        row = "  ".join(f"{m} r@5={figures[m]['recall@5']:.3f}" for m in learning.MODES)
        print(f"{prefix}outcomes {n}: {row}")
    table = report["read_text"]
    rows = ["frames", "synonyms", *(f"noise_{p}" for p in report["config"]["noise"])]
    lines = {name: table[name] for name in (*rows, "random_feedback")}
    if table["nearest_past_question"]:
        for wording in ("original", "synonyms"):
            lines[f"nearest past question, {wording}"] = table["nearest_past_question"][wording]
    for name, cells in lines.items():
        row = "  ".join(f"n={n} {cell['recall@5']:.3f}" for n, cell in cells.items())
        print(f"{prefix}{name} text r@5: {row}")
    timed = report["latency"]
    print(
        f"{prefix}read p50/p95 ms: n=0 {timed['no_feedback']['p50_ms']}/"
        f"{timed['no_feedback']['p95_ms']}, n={timed['taught']['outcomes']} "
        f"{timed['taught']['p50_ms']}/{timed['taught']['p95_ms']}"
    )
    if "locomo" in report:
        overall = report["locomo"]["recall@10"]["overall(1-4)"]
        gains = [fold["gain"]["mean"] for fold in report["locomo"]["folds"]]
        print(
            f"{prefix}locomo recall@10 gain {overall['gain']['mean']:+.3f} "
            f"{overall['gain']['ci95']} over {len(gains)} folds "
            f"(each {min(gains):+.3f} to {max(gains):+.3f})"
        )


def _vault(args: argparse.Namespace) -> int:
    from . import vault_bench

    report = vault_bench.run(args.out, notes=args.notes, queries=args.queries, seed=args.seed)
    return _show(
        args, report, json.dumps({k: v for k, v in report.items() if k != "benchmark"}, indent=2)
    )


def _trust(args: argparse.Namespace) -> int:
    from . import trust_bench

    report = trust_bench.run(args.out, args.sizes, seed=args.seed)
    return _show(args, report, json.dumps(report["runs"], indent=2))


def _ann(args: argparse.Namespace) -> int:
    from . import ann_bench  # needs the embed extra (faiss, the static model)

    report = ann_bench.run(
        args.out,
        args.sizes,
        embedder_name=args.embedder,
        libraries=args.libraries,
        index_max=args.index_max,
        queries=args.queries,
    )
    return _show(args, report, json.dumps(report["sizes"], indent=2))


def _consolidate(args: argparse.Namespace) -> int:
    from . import consolidate_bench

    report = consolidate_bench.run(
        args.out,
        size=args.size,
        stream_size=args.stream,
        seed=args.seed,
        locomo_path=args.locomo,
        conversations=args.conversations or None,
        embedder_name=None if args.embedder == "none" else args.embedder,
    )
    return _show(
        args, report, json.dumps({k: v for k, v in report.items() if k != "environment"}, indent=2)
    )


def _reinforce(args: argparse.Namespace) -> int:
    from . import reinforce_bench

    report = reinforce_bench.run(args.out, args.trials, seed=args.seed)
    return _show(args, report, json.dumps(report["runs"], indent=2))


def _ingest(args: argparse.Namespace) -> int:
    from . import ingest

    report = ingest.run(args.out, memories=args.memories, batch=args.batch, rounds=args.rounds)
    summary = {
        k: report[k] for k in ("memories", "batch", "ratio", "cpu_ratio", "raw_rows_differing")
    }
    summary.update(write_many_per_s=report["write_many"]["per_s"], raw_per_s=report["raw"]["per_s"])
    return _show(args, report, json.dumps(summary, indent=2))


def _statements(args: argparse.Namespace) -> int:
    from . import statements

    report = statements.run(args.out, memories=args.memories, embedder=args.embedder)
    return _show(
        args, report, json.dumps({k: v for k, v in report.items() if k != "benchmark"}, indent=2)
    )


def _trust_attribution(args: argparse.Namespace) -> int:
    from . import trust_attribution_bench

    report = trust_attribution_bench.run(
        args.out,
        horizons=tuple(args.horizons),
        reversible=args.reversible,
        budget=args.budget,
    )
    return _show(
        args, report, json.dumps({k: v for k, v in report.items() if k != "benchmark"}, indent=2)
    )


def _server(args: argparse.Namespace) -> int:
    from . import server_bench

    report = server_bench.run(
        args.out, clients=args.clients, seconds=args.seconds, examples=args.examples
    )
    return _show(
        args, report, json.dumps({k: report[k] for k in ("load", "crash", "fuzz")}, indent=2)
    )


def _folds(args: argparse.Namespace) -> int:
    from . import folds

    report = folds.run(
        args.data, args.out, embedder_name=None if args.embedder == "none" else args.embedder,
        conversations=args.conversations, seed=args.seed, db=args.backend,
    )  # fmt: skip
    return _show(args, report, json.dumps(report["recall"], indent=2))


def _clients(args: argparse.Namespace) -> int:
    from . import clients_bench

    report = clients_bench.run(
        args.out, clients=args.clients, seconds=args.seconds, rounds=args.rounds
    )
    return _show(
        args, report, json.dumps({k: report[k] for k in ("transports", "against_urllib")}, indent=2)
    )


def _hardening(args: argparse.Namespace) -> int:
    report = hardening_bench.run(
        args.out, dbs=args.backend, rounds=args.rounds, seconds=args.seconds, parts=args.only
    )
    return _show(args, report, json.dumps(hardening_bench.summary(report), indent=2))


def _render_docs(args: argparse.Namespace) -> int:
    from . import render_docs  # needs matplotlib (the docs extra)

    for path in render_docs.render(Path(args.results), Path(args.out)):
        print(path)
    return 0


def _embed(args: argparse.Namespace) -> int:
    from assocmem.vectors.local import default_models_dir

    models = Path(args.models_dir) if args.models_dir else default_models_dir()
    report = embed_speed.run(args.out, models, forms=args.forms, threads=args.threads)
    return _show(args, report, json.dumps(report, indent=2))
