"""``assocmem vault …``: the vault operations under short names, and the guided demo.

Invariant: each subcommand is the generated command of one registry operation (the
same arguments and output as ``assocmem vault-index`` and the rest); the demo works
on a copy of the bundled sample vault in a temporary folder, never on the package.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assocmem.adapters.cli.operations import add_operation, emit
from assocmem.config import Config
from assocmem.memory import Memory
from assocmem.surface import operations

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

# Short name -> the operation it runs.
VAULT_COMMANDS = {
    "index": "vault_index",
    "status": "index_status",
    "relevant": "relevant_notes",
    "coverage": "coverage_gap",
    "gaps": "find_gaps",
    "bridges": "bridge_candidates",
    "claims": "extract_claims",
    "ideas": "idea_methods",
    "maintain": "maintenance_report",
    "apply": "apply_links",
}


def add_vault(subparsers: Subparsers) -> None:
    """The ``vault`` group: one subcommand per vault operation, and ``demo``."""
    doc = "index a folder of Markdown notes and think and tidy over it"
    group = subparsers.add_parser("vault", help=doc, description=doc)
    actions = group.add_subparsers(dest="vault_action", required=True)
    for short, name in VAULT_COMMANDS.items():
        add_operation(actions, operations()[name], short)
    doc = "index a copy of the bundled sample vault and tour the tools"
    demo = actions.add_parser("demo", help=doc, description=doc)
    demo.set_defaults(run=cmd_vault_demo)


def sample_vault() -> Path:
    """The bundled sample vault (package data; read-only as far as the demo goes)."""
    return Path(str(resources.files("assocmem").joinpath("vault", "sample")))


def cmd_vault_demo(args: argparse.Namespace, config: Config) -> int:
    with tempfile.TemporaryDirectory(prefix="assocmem-vault-") as folder:
        vault = Path(folder) / "vault"
        shutil.copytree(sample_vault(), vault)
        with Memory(str(Path(folder) / "demo.db")) as memory:
            tour = _tour(memory, vault)
    emit(args, tour, "\n".join(_lines(tour)))
    return 0


def _tour(memory: Memory, vault: Path) -> dict[str, Any]:
    indexed = memory.vault_index(str(vault))
    gaps = memory.find_gaps()
    report = memory.maintenance_report()
    planned = memory.apply_links()
    applied = memory.apply_links(dry_run=False)
    again = memory.apply_links(dry_run=False)
    query = "how does feedback speed up learning"
    return {
        "index": indexed.to_dict(),
        "status": memory.index_status().to_dict(),
        "relevant": [h.to_dict() for h in memory.relevant_notes(query, k=3)],
        "gaps": gaps.to_dict(),
        "bridges": [b.to_dict() for b in memory.bridge_candidates("Deliberate Practice", k=2)],
        "report": report.to_dict(),
        "plan": planned.to_dict(),
        "applied": applied.to_dict(),
        "again": again.to_dict(),
        "health_after": memory.maintenance_report().health,
    }


def _lines(tour: dict[str, Any]) -> list[str]:
    index, report, plan = tour["index"], tour["report"], tour["plan"]
    lines = [
        f"> vault_index -> {index['notes']} notes, {index['chunks']} chunks in {index['seconds']}s",
        f"> index_status -> folders {tour['status']['folders']}",
        '> relevant_notes("how does feedback speed up learning", k=3)',
        *(f"  -> {h['title']} ({h['folder']})  score {h['score']:.2f}  line {h['line']}"
          for h in tour["relevant"]),
        f"> find_gaps -> isolated {tour['gaps']['isolated']}",
        *(f'> bridge_candidates("Deliberate Practice") -> {b["title"]}: {b["reason"]}'
          for b in tour["bridges"]),
        f"> maintenance_report -> health {report['health']}, dead links "
        f"{[d['target'] for d in report['dead_links']]}, orphans "
        f"{[(o['note'], o['suggested']) for o in report['orphans']]}, "
        f"duplicates {report['duplicates']}",
        f"> apply_links() dry run -> {[(p['note'], p['links']) for p in plan['plans']]}, "
        f"wrote {plan['written']}",
        f"> apply_links(dry_run=False) -> wrote {tour['applied']['written']} notes, "
        f"health {report['health']} -> {tour['health_after']}",
        f"> apply_links(dry_run=False) again -> wrote {tour['again']['written']} (idempotent)",
    ]  # fmt: skip
    return lines
