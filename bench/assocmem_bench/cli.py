"""Registers the `assocmem bench` subcommands (entry point group ``assocmem.cli``)."""

from __future__ import annotations

import argparse
import json

from . import core


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` and its subcommands to the assocmem CLI."""
    doc = "run a benchmark and write its results as JSON"
    parser = subparsers.add_parser("bench", help=doc, description=doc)
    benches = parser.add_subparsers(dest="bench", required=True)

    doc = "write throughput and read latency at 10k and 100k memories"
    p = benches.add_parser("core", help=doc, description=doc)
    p.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    p.add_argument("--out", default="bench-core.json", help="where to write the JSON")
    p.set_defaults(handler=_core)


def _core(args: argparse.Namespace) -> int:
    report = core.run([int(s) for s in args.sizes.split(",")], args.out)
    print(json.dumps(report["sizes"], indent=2))
    return 0
