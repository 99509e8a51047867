"""The `assocmem` command line: parse, call one `Memory` method, print.

Environment is read here and only here: ``ASSOCMEM_DB`` names the default store,
``ASSOCMEM_AGENT`` the default agent. Errors print one line and exit with the
code of their class (see `EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from assocmem import __version__
from assocmem.errors import (
    AccessDenied,
    AssocmemError,
    DependencyMissing,
    InvalidInput,
    NotFound,
    StoreBusy,
    StoreError,
)
from assocmem.memory import Memory
from assocmem.store import POSTGRES_SCHEMES
from assocmem.types import ReadResult
from assocmem.vectors import local as local_embedders
from assocmem.vectors.embedders import embedder_names

# Exit codes by error class, most specific first; argparse itself exits with 2.
EXIT_CODES: tuple[tuple[type[AssocmemError], int], ...] = (
    (InvalidInput, 2),
    (NotFound, 3),
    (AccessDenied, 6),
    (StoreBusy, 4),
    (StoreError, 5),
    (AssocmemError, 1),
)


def default_db() -> str:
    """``$ASSOCMEM_DB``, else ``memory.db`` in the user's data directory."""
    if os.environ.get("ASSOCMEM_DB"):
        return os.environ["ASSOCMEM_DB"]
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return str(base / "assocmem" / "memory.db")


def _open(args: argparse.Namespace) -> Memory:
    return Memory(
        _db_path(args),
        agent_id=args.agent,
        project_id=args.project,
        channel=args.channel,
        embedder=args.embedder or None,
    )


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2) if args.json else text)


# -- commands -----------------------------------------------------------------


def cmd_write(args: argparse.Namespace) -> int:
    meta = _json_arg(args.meta, "meta")
    with _open(args) as mem:
        result = mem.write(
            args.text,
            concepts=args.concept or None,
            kind=args.kind,
            tags=args.tag or None,
            value=args.value,
            meta=meta,
            source=args.source,
            observed_at=args.observed_at,
        )
    text = result.id if result.stored and result.id else f"refused: {result.reason} ({result.id})"
    _emit(args, result.to_dict(), text)
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.read(
            args.query, concepts=args.concept or None, k=args.k, hops=args.hops,
            threshold=args.threshold,
        )  # fmt: skip
    _emit(args, result.to_dict(), _format_read(result))
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.feedback(args.ids, args.outcome, query_concepts=args.concept or None)
    summary = f"{result.lessons_updated} lessons taught, {result.links_updated} links moved"
    _emit(args, result.to_dict(), f"feedback {result.id}: {summary}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.graph(args.concepts, depth=args.depth)
    lines = [
        f"{e.source} — {e.target}  weight {e.weight:g}  count {e.count}  valence {e.valence:+.2f}"
        for e in result.edges
    ]
    _emit(args, result.to_dict(), "\n".join(lines) or "no links")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        found = mem.get(args.ids)
    _emit(args, [r.to_dict() for r in found], "\n".join(f"{r.id}  {r.text}" for r in found))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        for record in mem.export():
            print(json.dumps(record.to_dict(), ensure_ascii=False))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        stats = mem.stats()
    text = (
        f"{stats.memories} memories, {stats.concepts} concepts, {stats.links} links, "
        f"{stats.feedback} feedback"
    )
    _emit(args, stats.to_dict(), text)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        count = mem.forget(**_ids_or_where(args))
    _emit(args, {"forgotten": count}, f"forgot {count} memories")
    return 0


def cmd_declare(args: argparse.Namespace) -> int:
    associations = _json_arg(args.associations, "associations")
    with _open(args) as mem:
        result = mem.declare(associations, anchor_ref=args.anchor, declared_by=args.declared_by)
    dropped = "".join(f"\ndropped {d.item}: {d.reason}" for d in result.dropped)
    text = f"{len(result.entities)} entities, {len(result.relations)} relations{dropped}"
    _emit(args, result.to_dict(), text)
    return 0


def cmd_retract(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.retract(args.relation or [], [tuple(m) for m in args.mention or []])
    _emit(args, result, f"retracted {result['relations']} relations, {result['mentions']} mentions")
    return 0


def cmd_delete_entity(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        count = mem.delete_entity(args.entity)
    _emit(args, {"deleted": count}, f"deleted {count} entities")
    return 0


def cmd_traverse(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.traverse(args.entity, max_hops=args.max_hops, limit=args.limit)
    lines = [f"{'  ' * e.hops}{e.name} ({len(e.refs)} refs)" for e in result.entities]
    lines += [f"{r.subject} —{r.predicate}→ {r.object}" for r in result.relations]
    _emit(args, result.to_dict(), "\n".join(lines))
    return 0


def cmd_reconstruct(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.reconstruct(
            args.query, count=args.count, max_hops=args.max_hops, max_evidence=args.max_evidence
        )
    lines = []
    for item in result.items:
        lines.append(f"{item.ref}  {item.text}")
        lines += [f"    + {e.ref} [{e.why}]  {e.text}" for e in item.evidence]
    _emit(args, result.to_dict(), "\n".join(lines))
    return 0


def _ids_or_where(args: argparse.Namespace) -> dict[str, Any]:
    if args.where:
        return {"where": _json_arg(args.where, "where")}
    return {"ids": args.ids}


def cmd_archive(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.archive(**_ids_or_where(args))
    _emit(args, result.to_dict(), f"archived {len(result.changed)}, skipped {len(result.skipped)}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.restore(args.ids)
    _emit(args, result.to_dict(), f"restored {len(result.changed)}")
    return 0


def cmd_protect(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        result = mem.protect(args.ids, protected=not args.unprotect)
    _emit(
        args, result.to_dict(), f"{'un' if args.unprotect else ''}protected {len(result.changed)}"
    )
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        chain = mem.history((args.subject, args.relation))
    lines = [f"{r.observed_at}  {r.status:10s}  {r.id}  {r.text}" for r in chain]
    _emit(args, [r.to_dict() for r in chain], "\n".join(lines) or "no values")
    return 0


def cmd_contradictions(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        flags = mem.contradictions()
    lines = [f"{f.kind}: {f.first} vs {f.second} ({f.detail})" for f in flags]
    _emit(args, [f.to_dict() for f in flags], "\n".join(lines) or "none")
    return 0


def cmd_end_task(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        count = mem.end_task(args.task)
    _emit(args, {"cleared": count}, f"cleared {count} working memories")
    return 0


def cmd_retain(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        report = mem.retain(_json_arg(args.policy, "policy")) if args.policy else mem.retain()
    _emit(args, report, "\n".join(f"{r['name']}: {r['matched']} matched" for r in report))
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        names = mem.resolve(args.entity, *args.predicates)
    _emit(args, names, "\n".join(names))
    return 0


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from assocmem.adapters.server import create_app
        from assocmem.adapters.server.keys import KeyRing
    except ImportError as exc:
        raise DependencyMissing("the HTTP server needs `pip install assocmem[server]`") from exc
    ring = KeyRing(args.keys) if args.keys else None
    if ring is not None and not len(ring):
        ring = None  # an empty key file authenticates no one: treated as no keys
    if ring is None and args.host not in LOOPBACK and not args.no_auth:
        raise AccessDenied(
            f"no API keys configured: refusing to serve on {args.host}. Add keys with "
            "`assocmem keys add` and pass --keys, or pass --no-auth to serve unauthenticated"
        )
    app = create_app(
        _db_path(args), keys=ring, default_agent=args.agent, embedder=args.embedder or None,
    )  # fmt: skip
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from assocmem.adapters.server.keys import add_key, read_keys, revoke_key

    if args.action == "add":
        entry, secret = add_key(args.keys, args.key_agent or args.agent, tuple(args.role or ()))
        _emit(args, {**entry.public(), "key": secret},
              f"{secret}\n(key {entry.id} for agent {entry.agent_id}; shown only now)")  # fmt: skip
    elif args.action == "revoke":
        if not args.id or not revoke_key(args.keys, args.id):
            raise NotFound(f"no active key {args.id!r} in {args.keys}")
        _emit(args, {"revoked": args.id}, f"revoked {args.id}")
    else:
        entries = [e.public() for e in read_keys(args.keys)]
        text = "\n".join(
            f"{e['id']}  {e['agent_id']}  roles={','.join(e['roles']) or '-'}"
            f"{'  revoked' if e['revoked_at'] else ''}"
            for e in entries
        )
        _emit(args, entries, text or "no keys")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from assocmem.adapters.mcp import run_stdio

    run_stdio(_db_path(args), agent_id=args.agent, project_id=args.project,
              channel=args.channel, embedder=args.embedder or None)  # fmt: skip
    return 0


def _db_path(args: argparse.Namespace) -> str:
    """The store target: URLs and ``:memory:`` pass unchanged; a file path is expanded and
    its folder created."""
    if args.db == ":memory:" or args.db.startswith(POSTGRES_SCHEMES):
        return str(args.db)
    path = Path(args.db).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


def cmd_embedders_list(args: argparse.Namespace) -> int:
    names = embedder_names()
    _emit(args, names, "\n".join(names))
    return 0


def cmd_embedders_build(args: argparse.Namespace) -> int:
    builders = {
        "minilm-onnx": local_embedders.build_onnx,
        "minilm-static": local_embedders.build_static,
    }
    if args.name not in builders:
        raise InvalidInput(f"only {', '.join(builders)} need building", field="name")
    folder = (
        Path(args.model_dir) if args.model_dir else local_embedders.default_models_dir() / args.name
    )
    built = builders[args.name](folder)
    _emit(args, {"name": args.name, "model_dir": str(built)}, f"built {args.name} in {built}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="assocmem-demo-") as folder:
        db = str(Path(folder) / "demo.db")
        learned, loaded, rebuilt = (_run_step(step, db) for step in ("learn", "recall", "rebuild"))
    print(_format_demo(learned, loaded, rebuilt))
    return 0


def _run_step(step: str, db: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem.demo", step, db],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise AssocmemError(f"demo step {step!r} failed: {done.stderr.strip()}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# -- formatting ---------------------------------------------------------------


def _format_read(result: ReadResult) -> str:
    added = ", ".join(f"{c}({w:g})" for c, w in result.expanded_concepts.items()) or "nothing"
    lines = [f"asked: {', '.join(result.query_concepts)} | links add: {added}"]
    for item in result.items:
        via = f"  [via {', '.join(v.concept for v in item.via)}]" if item.via else ""
        lines.append(f"{item.id}  {item.text}{via}")
    return "\n".join(lines)


def _demo_column(title: str, read: dict[str, Any]) -> list[str]:
    added = ", ".join(f"{c}({w:g})" for c, w in read["expanded_concepts"].items()) or "nothing"
    lines = [title, "-" * len(title), f"links add: {added}"]
    for item in read["items"]:
        via = f" [via {', '.join(item['via'])}]" if item["via"] else ""
        lines += textwrap.wrap("- " + item["text"] + via, 38, subsequent_indent="  ")
    return lines


def _format_demo(learned: dict[str, Any], loaded: dict[str, Any], rebuilt: dict[str, Any]) -> str:
    columns = [
        _demo_column("1: learned, two helpful answers", learned["after"]),
        _demo_column("2: new process, links loaded", loaded),
        _demo_column("3: new process, rebuilt from notes", rebuilt),
    ]
    height = max(len(c) for c in columns)
    rows = [
        "  ".join(f"{(col[i] if i < len(col) else ''):<38}" for col in columns).rstrip()
        for i in range(height)
    ]
    before = "\n".join(_demo_column("Process 1 before feedback, asked: timeout", learned["before"]))
    return "\n".join([before, "", *rows, "", *textwrap.wrap(_verdict(loaded, rebuilt), 110)])


def _verdict(loaded: dict[str, Any], rebuilt: dict[str, Any]) -> str:
    """What only the saved weights held, read off the two fresh processes."""
    taught = {c: w for c, w in loaded["expanded_concepts"].items()
              if rebuilt["expanded_concepts"].get(c) != w}  # fmt: skip
    lost = [
        i["text"] for i in loaded["items"] if i["text"] not in {j["text"] for j in rebuilt["items"]}
    ]
    if not taught:
        return "The loaded and rebuilt stores read alike: nothing was learned beyond the notes."
    links = ", ".join(f"{c}({w:g})" for c, w in taught.items())
    return (
        f"Only the saved weights hold {links}: process 2 reads the taught path, while the "
        f"control 3, rebuilt from the notes, loses it"
        + (f" and misses: {'; '.join(lost)}" if lost else ".")
    )


def _json_arg(value: str | None, field: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--{field} must be JSON: {exc.msg}", field=field) from exc


# -- parser -------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, including subcommands from plugins."""
    parser = argparse.ArgumentParser(prog="assocmem", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    parser.add_argument(
        "--db", default=None, help="store path (default: $ASSOCMEM_DB or user data dir)"
    )
    parser.add_argument(
        "--agent", default=os.environ.get("ASSOCMEM_AGENT", "default"), help="agent id"
    )
    parser.add_argument("--project", default="", help="project id ('' is the global pool)")
    parser.add_argument("--channel", default="", help="channel ('' is shared)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--embedder",
        default=os.environ.get("ASSOCMEM_EMBEDDER", ""),
        help="embedder name for the vector arm (default: $ASSOCMEM_EMBEDDER, else none)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(
        name: str, handler: Callable[[argparse.Namespace], int], doc: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=doc, description=doc)
        p.set_defaults(handler=handler)
        return p

    p = command("write", cmd_write, "store one memory")
    p.add_argument("text")
    p.add_argument(
        "--concept", "-c", action="append", help="a concept (repeat); default: extracted"
    )
    p.add_argument("--kind", default="episodic", help="working | episodic | semantic | procedural")
    p.add_argument("--tag", action="append", help="a tag (repeat)")
    p.add_argument("--value", type=float, default=1.0, help="importance, default 1")
    p.add_argument("--meta", help="a JSON object")
    p.add_argument("--source", help="where it came from")
    p.add_argument("--observed-at", help="absolute ISO 8601 time with timezone")

    p = command("read", cmd_read, "recall memories for a question or concepts")
    p.add_argument("query", nargs="?")
    p.add_argument("--concept", "-c", action="append", help="a query concept (repeat)")
    p.add_argument("-k", type=int, default=10, help="items to return")
    p.add_argument("--hops", type=int, default=1, help="link hops to follow (0-3)")
    p.add_argument("--threshold", type=float, default=2.0, help="link weight to follow")

    p = command("feedback", cmd_feedback, "rate the memories an answer relied on")
    p.add_argument("ids", nargs="+")
    p.add_argument("--outcome", type=float, required=True, help="from -1 to 1")
    p.add_argument("--concept", "-c", action="append", help="a query concept (repeat)")

    p = command("graph", cmd_graph, "show learned links around concepts")
    p.add_argument("concepts", nargs="+")
    p.add_argument("--depth", type=int, default=1, help="hops out (1-3)")

    p = command("get", cmd_get, "show memories by id")
    p.add_argument("ids", nargs="+")
    command("export", cmd_export, "print every memory in scope as JSON lines")
    p = command("forget", cmd_forget, "delete memories for good (by ids or --where)")
    p.add_argument("ids", nargs="*")
    p.add_argument("--where", help="a JSON filter instead of ids")
    p = command("archive", cmd_archive, "move memories out of default reads (by ids or --where)")
    p.add_argument("ids", nargs="*")
    p.add_argument("--where", help="a JSON filter instead of ids")
    p = command("restore", cmd_restore, "bring archived memories back")
    p.add_argument("ids", nargs="+")
    p = command("protect", cmd_protect, "shield memories from archiving")
    p.add_argument("ids", nargs="+")
    p.add_argument("--unprotect", action="store_true", help="lift the shield")
    p = command("history", cmd_history, "every value a supersession key held")
    p.add_argument("subject")
    p.add_argument("relation")
    command("contradictions", cmd_contradictions, "pairs flagged for review")
    p = command("end-task", cmd_end_task, "clear a task's working memory")
    p.add_argument("task")
    p = command("retain", cmd_retain, "apply a retention policy (default: seed 001's example)")
    p.add_argument("--policy", help="a JSON policy {rules: [...]}")
    p = command("resolve", cmd_resolve, "follow declared relations through predicates")
    p.add_argument("entity")
    p.add_argument("predicates", nargs="+")

    p = command("declare", cmd_declare, "declare entities, aliases and relations (JSON)")
    p.add_argument("associations", help='{"entities": [...], "relations": [...]}')
    p.add_argument("--anchor", help="mem:<id> of the memory that evidences them")
    p.add_argument("--declared-by", default="agent", choices=["agent", "operator"])
    p = command("retract", cmd_retract, "retract declared relations and mentions")
    p.add_argument("--relation", type=int, action="append", help="a relation id (repeat)")
    p.add_argument("--mention", nargs=2, action="append", metavar=("ENTITY", "MEMREF"))
    p = command("delete-entity", cmd_delete_entity, "delete an entity and what names it")
    p.add_argument("entity")
    p = command("traverse", cmd_traverse, "show an entity's declared neighbourhood")
    p.add_argument("entity")
    p.add_argument("--max-hops", type=int, default=1)
    p.add_argument("--limit", type=int, default=20)
    p = command("reconstruct", cmd_reconstruct, "recall with declared-graph evidence")
    p.add_argument("query")
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--max-hops", type=int, default=1)
    p.add_argument("--max-evidence", type=int, default=5)
    command("stats", cmd_stats, "count memories, concepts, links and feedback")
    command("demo", cmd_demo, "run the restart control in three processes")

    p = command("serve", cmd_serve, "serve the memory over HTTP (needs assocmem[server])")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--keys", help="the API key file (see `assocmem keys`)")
    p.add_argument("--no-auth", action="store_true",
                   help="allow serving without keys on a non-loopback address")  # fmt: skip
    p.add_argument("--log-level", default="warning")
    p = command("keys", cmd_keys, "add, revoke or list the server's API keys")
    p.add_argument("action", choices=["add", "revoke", "list"])
    p.add_argument("id", nargs="?", help="the key id to revoke")
    p.add_argument("--keys", required=True, help="the key file")
    p.add_argument("--key-agent", help="agent the new key speaks for (default: --agent)")
    p.add_argument("--role", action="append", help="a role the key may read in (repeat)")
    command("mcp", cmd_mcp, "serve the memory to an MCP client over stdio (needs assocmem[mcp])")

    doc = "list or build embedders"
    embedders = sub.add_parser("embedders", help=doc, description=doc)
    which = embedders.add_subparsers(dest="embedders", required=True)
    p = which.add_parser("list", help="list embedder names", description="list embedder names")
    p.set_defaults(handler=cmd_embedders_list)
    doc = "build the ONNX or static form of the packaged MiniLM (offline)"
    p = which.add_parser("build", help=doc, description=doc)
    p.add_argument("name", help="minilm-onnx or minilm-static")
    p.add_argument("--model-dir", help="where to write it (default: user data dir)")
    p.set_defaults(handler=cmd_embedders_build)

    for plugin in entry_points(group="assocmem.cli"):
        plugin.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``assocmem`` command."""
    args = build_parser().parse_args(argv)
    args.db = args.db or default_db()
    try:
        code: int = args.handler(args)
        return code
    except AssocmemError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


if __name__ == "__main__":
    raise SystemExit(main())
