"""``assocmem import FILE``: an export file streamed into the memory in batches.

Invariant: the file is read line by line and sent in batches of `BATCH` lines to
`Memory.import_lines`, so a file of any size takes bounded memory; a line that is
not JSON is reported with its number like any other refused line, and the rest is
imported. The command exits 0 when every line was taken, 1 when some were refused.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from assocmem.adapters.cli.operations import emit, open_memory
from assocmem.config import Config
from assocmem.errors import InvalidInput
from assocmem.memory import Memory
from assocmem.portable.types import ImportReport, LineProblem
from assocmem.progress import bar

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

# Lines per call: well inside the HTTP body limit for typical records, and few
# enough transactions that a large file imports at the store's batch speed.
BATCH = 1000


def cmd_import(args: argparse.Namespace, config: Config) -> int:
    with open(args.file, encoding="utf-8") as source:
        total = sum(1 for _ in source)
    with open(args.file, encoding="utf-8") as source, open_memory(config) as memory:
        report = import_file(memory, source, total, rehome=args.rehome, whole=args.all)
    data = report.to_dict()
    lines = [f"imported: {json.dumps(report.imported)}", f"skipped: {json.dumps(report.skipped)}"]
    lines += [f"line {p.line}: {p.field or '-'}: {p.message}" for p in report.errors]
    emit(args, data, "\n".join(lines))
    return 1 if report.errors else 0


def import_file(
    memory: Memory, source: TextIO, total: int, *, rehome: bool, whole: bool
) -> ImportReport:
    """Import every line of ``source``; ``whole`` requires the ``--all`` header first."""
    imported: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    problems: list[LineProblem] = []
    with bar(total, desc="import", unit="line") as progress:
        for position, (batch, unreadable) in enumerate(_batches(source)):
            if whole and position == 0 and (not batch or batch[0][1].get("line") != "header"):
                raise InvalidInput("an --all import needs an export --all file", field="file")
            problems += unreadable
            if batch:
                report = memory.import_lines([line for _, line in batch], rehome=rehome)
                imported.update(report.imported)
                skipped.update(report.skipped)
                # The batch numbers its lines from 1, blank lines left out: the file's
                # own numbers come back from the batch.
                problems += [
                    LineProblem(batch[p.line - 1][0], p.field, p.error, p.message)
                    for p in report.errors
                ]
            progress.update(len(batch) + len(unreadable))
    return ImportReport(
        imported=dict(sorted(imported.items())),
        skipped=dict(sorted(skipped.items())),
        errors=tuple(sorted(problems, key=lambda p: p.line)),
    )


def _batches(
    source: TextIO,
) -> Iterator[tuple[list[tuple[int, dict[str, Any]]], list[LineProblem]]]:
    """``([(line number, object)], lines that are not JSON objects)``, batch by batch."""
    batch: list[tuple[int, dict[str, Any]]] = []
    unreadable: list[LineProblem] = []
    for number, text in enumerate(source, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            unreadable.append(LineProblem(number, None, "InvalidInput", f"not JSON: {exc.msg}"))
            continue
        if not isinstance(line, dict):
            unreadable.append(LineProblem(number, None, "InvalidInput", "not a JSON object"))
            continue
        batch.append((number, line))
        if len(batch) == BATCH:
            yield batch, unreadable
            batch, unreadable = [], []
    yield batch, unreadable


def add_import(subparsers: Subparsers) -> None:
    """The ``import`` command."""
    doc = "import what export (or export --all) wrote, keeping ids and times"
    parser = subparsers.add_parser("import", help=doc, description=doc)
    parser.add_argument("file", help="a JSON-lines file from assocmem export")
    parser.add_argument(
        "--all", action="store_true", help="require a whole-store file (export --all)"
    )
    parser.add_argument(
        "--rehome", action="store_true", help="take records of another agent as this agent's own"
    )
    parser.set_defaults(run=cmd_import)
