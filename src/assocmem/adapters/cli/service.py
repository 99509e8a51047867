"""The CLI commands that are not `Memory` operations: serve, keys, mcp, demo, embedders.

Invariant: each reads its settings from the `Config` it is handed, never from the
environment itself, so a flag, ``$ASSOCMEM_*`` and the default rank the same way
here as for every operation command.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assocmem import embedder_names
from assocmem.adapters.cli.operations import emit
from assocmem.adapters.cli.transfer import add_import
from assocmem.adapters.cli.vault import add_vault
from assocmem.adapters.server.limits import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    KEEP_ALIVE_TIMEOUT,
    MAX_CONNECTIONS,
)
from assocmem.config import Config, build_embedder_form, store_target
from assocmem.errors import AccessDenied, AssocmemError, DependencyMissing, InvalidInput, NotFound
from assocmem.surface import GROUPS

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def cmd_serve(args: argparse.Namespace, config: Config) -> int:
    try:
        from assocmem.adapters.server import connections, create_app
        from assocmem.adapters.server.gate import Hosts
        from assocmem.adapters.server.keys import KeyRing
        from assocmem.adapters.server.logs import configure
    except ImportError as exc:
        raise DependencyMissing("the HTTP server needs `pip install assocmem[server]`") from exc
    ring = KeyRing(config.keys) if config.keys else None
    if ring is not None and not len(ring):
        ring = None  # an empty key file authenticates no one: treated as no keys
    if ring is None and args.host not in LOOPBACK and not args.no_auth:
        raise AccessDenied(
            f"no API keys configured: refusing to serve on {args.host}. Add keys with "
            "`assocmem keys add` and pass --keys, or pass --no-auth to serve unauthenticated"
        )
    # A keyless server answers only to its own names; a keyed one, where no public name
    # is given, to any (a page rebound to it has no key).
    allowed = tuple(args.allowed_hosts or ())
    hosts = Hosts(own=(args.host,), allowed=allowed, check_host=ring is None or bool(allowed))
    # A built Embedder, so the HTTP embedder arrives with its URL, model and key.
    embedder: Any = config.build_embedder()
    app = create_app(store_target(config.db), keys=ring, default_agent=config.agent,
                     embedder=embedder, vault_roots=config.vault_roots,
                     strict_corroboration=config.strict_corroboration,
                     receipts=config.receipts, receipt_key=config.read_receipt_key(),
                     hosts=hosts, body_timeout=args.body_timeout)  # fmt: skip
    configure(config.log_level)  # assocmem's records: requests, errors, the store
    connections.serve(app, host=args.host, port=args.port, log_level=config.log_level,
                      keep_alive_timeout=args.keep_alive_timeout,
                      header_timeout=args.header_timeout,
                      max_connections=args.max_connections)  # fmt: skip
    return 0


def _positive(kind: type[int] | type[float]) -> Any:
    """An argparse type: a number of ``kind`` above zero."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be a positive {kind.__name__}, got {text!r}")
        return value

    return parse


def _add_serve_bounds(p: argparse.ArgumentParser) -> None:
    """The flags bounding what a client may hold (their defaults' reasons are in
    server/limits.py) and the names the server answers to."""
    p.add_argument("--allowed-host", dest="allowed_hosts", action="append", metavar="NAME",
                   help="a name (or name:port) clients may reach this server by besides "
                   "the loopback names and --host, e.g. the public name behind a proxy "
                   "(repeat). A keyless server answers only to those; a keyed one with none "
                   "given answers to any, its keys guarding it. A request from a web page of "
                   "another origin is always refused")  # fmt: skip
    p.add_argument("--keep-alive-timeout", type=_positive(int), default=KEEP_ALIVE_TIMEOUT,
                   metavar="SECONDS", help="close a connection with no request in flight "
                   "after this long without a byte (default: %(default)s)")  # fmt: skip
    p.add_argument("--header-timeout", type=_positive(float), default=HEADER_TIMEOUT,
                   metavar="SECONDS", help="close a connection whose request head has not "
                   "all arrived this long after it opened or was last answered "
                   "(default: %(default)s)")  # fmt: skip
    p.add_argument("--body-timeout", type=_positive(float), default=BODY_TIMEOUT,
                   metavar="SECONDS", help="answer 408 to a request whose body has not all "
                   "arrived this long after its head (default: %(default)s)")  # fmt: skip
    p.add_argument("--max-connections", type=_positive(int), default=MAX_CONNECTIONS,
                   metavar="N", help="serve at most this many connections at once (503 "
                   "beyond), shedding the longest idle first; kept below the open-file "
                   "limit, which serve raises to its hard one (default: %(default)s)")  # fmt: skip


def _key_file(config: Config) -> str:
    if not config.keys:
        raise InvalidInput("no key file: pass --keys or set $ASSOCMEM_KEYS", field="keys")
    return config.keys


def cmd_keys_add(args: argparse.Namespace, config: Config) -> int:
    from assocmem.adapters.server.keys import add_key

    agent = args.key_agent or config.agent
    grants = tuple(args.agents or ())
    entry, secret = add_key(_key_file(config), agent, tuple(args.role or ()), grants)
    speaks = entry.agent_id + (f", and {', '.join(grants)}" if grants else "")
    # Only the secret on stdout (``KEY=$(assocmem keys add)``); the note is for a person.
    emit(args, {**entry.public(), "key": secret}, secret)
    if not args.json:
        print(f"key {entry.id} for agent {speaks}; its secret is shown only now", file=sys.stderr)
    return 0


def cmd_keys_revoke(args: argparse.Namespace, config: Config) -> int:
    from assocmem.adapters.server.keys import revoke_key

    keys = _key_file(config)
    if not revoke_key(keys, args.id):
        raise NotFound(f"no active key {args.id!r} in {keys}")
    emit(args, {"revoked": args.id}, f"revoked {args.id}")
    return 0


def cmd_keys_list(args: argparse.Namespace, config: Config) -> int:
    from assocmem.adapters.server.keys import read_keys

    entries = [e.public() for e in read_keys(_key_file(config))]
    text = "\n".join(
        f"{e['id']}  {e['agent_id']}  roles={','.join(e['roles']) or '-'}"
        f"{'  revoked' if e['revoked_at'] else ''}"
        for e in entries
    )
    emit(args, entries, text or "no keys")
    return 0


def cmd_mcp(args: argparse.Namespace, config: Config) -> int:
    from assocmem.adapters.mcp import run

    run(store_target(config.db), transport=args.transport, port=args.port,
        agent_id=config.agent, project_id=config.project, channel=config.channel,
        role=args.role, embedder=config.build_embedder(), vault_roots=config.vault_roots,
        tools=_groups(args))  # fmt: skip
    return 0


def cmd_tools(args: argparse.Namespace, config: Config) -> int:
    from assocmem.adapters.mcp import tool_schemas

    print(json.dumps(tool_schemas(_groups(args), args.format), indent=2))
    return 0


def cmd_embedders_list(args: argparse.Namespace, config: Config) -> int:
    names = embedder_names()
    emit(args, names, "\n".join(names))
    return 0


def cmd_embedders_build(args: argparse.Namespace, config: Config) -> int:
    built = build_embedder_form(args.name, args.model_dir)
    emit(args, {"name": args.name, "model_dir": str(built)}, f"built {args.name} in {built}")
    return 0


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    with tempfile.TemporaryDirectory(prefix="assocmem-demo-") as folder:
        db = str(Path(folder) / "demo.db")
        learned, loaded, rebuilt = (_run_step(step, db) for step in ("learn", "recall", "rebuild"))
    data = {"learned": learned, "loaded": loaded, "rebuilt": rebuilt}
    emit(args, data, _format_demo(learned, loaded, rebuilt))
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


def _command(subparsers: Subparsers, name: str, run: Any, doc: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=doc, description=doc)
    parser.set_defaults(run=run)
    return parser


def _groups(args: argparse.Namespace) -> list[str]:
    """The tool groups ``--tools`` names."""
    return [group.strip() for group in args.tools.split(",") if group.strip()]


def _tools_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tools", default="core",
                        help=f"comma-separated tool groups: {', '.join(GROUPS)}, or all "
                        "(default: core, the everyday tools)")  # fmt: skip


def _vault_root_option(parser: argparse.ArgumentParser, doc: str) -> None:
    parser.add_argument(
        "--vault-root",
        dest="vault_roots",
        action="append",
        default=argparse.SUPPRESS,
        help=f"{doc} (repeat; default: $ASSOCMEM_VAULT_ROOTS, else none)",
    )


def _keys_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a level that was not given must not overwrite --keys given at another
    # level (``keys --keys F revoke ID`` and ``keys revoke --keys F ID`` both work).
    parser.add_argument("--keys", default=argparse.SUPPRESS,
                        help="the key file (default: $ASSOCMEM_KEYS)")  # fmt: skip


def add_keys(subparsers: Subparsers) -> None:
    """``keys add|revoke|list``, each taking ``--keys`` before or after its name."""
    doc = "add, revoke or list the server's API keys"
    keys = subparsers.add_parser("keys", help=doc, description=doc)
    _keys_option(keys)
    actions = keys.add_subparsers(dest="keys_action", required=True)
    p = _command(actions, "add", cmd_keys_add, "add a key; its secret is printed only now")
    _keys_option(p)
    p.add_argument("--key-agent", help="agent the new key speaks for (default: --agent)")
    p.add_argument("--role", action="append",
                   help="a role the key may read in (repeat; default: none)")  # fmt: skip
    p.add_argument("--agents", action="append",
                   help="a service key: another agent id it may act for, or a prefix "
                   "ending in * (repeat; default: none); each request names its "
                   "agent_id")  # fmt: skip
    p = _command(actions, "revoke", cmd_keys_revoke, "revoke a key by id")
    _keys_option(p)
    p.add_argument("id", help="the key id to revoke")
    p = _command(actions, "list", cmd_keys_list, "list the keys (never their secrets)")
    _keys_option(p)


def add_services(subparsers: Subparsers) -> None:
    """Every command that is not a `Memory` operation."""
    _command(subparsers, "demo", cmd_demo, "run the restart control in three processes")
    p = _command(subparsers, "serve", cmd_serve, "serve the memory over HTTP, with its "
                 "dashboard at / (needs assocmem[server])")  # fmt: skip
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on; one that is not loopback needs --keys "
                   "or --no-auth")  # fmt: skip
    p.add_argument("--port", type=int, default=8765, help="the port to listen on")
    _keys_option(p)
    p.add_argument("--no-auth", action="store_true",
                   help="allow serving without keys on a non-loopback address")  # fmt: skip
    _vault_root_option(p, "a folder clients may index as a vault")
    p.add_argument("--strict-corroboration", action="store_true", default=argparse.SUPPRESS,
                   help="count an origin only as a verified attestation key "
                   "(default: $ASSOCMEM_STRICT_CORROBORATION)")  # fmt: skip
    p.add_argument(
        "--receipts",
        action="store_true",
        default=argparse.SUPPRESS,
        help="append a write receipt for every write (default: $ASSOCMEM_RECEIPTS)",
    )
    p.add_argument("--receipt-key-file", default=argparse.SUPPRESS,
                   help="a file holding the hex Ed25519 key that signs receipts (turns them "
                   "on; default: $ASSOCMEM_RECEIPT_KEY_FILE)")  # fmt: skip
    p.add_argument(
        "--log-level", default=argparse.SUPPRESS,
        help="the log level: debug, info, warning or error (default: $ASSOCMEM_LOG_LEVEL,"
        " else info; info logs every request, refusals and pages throttled per client)",
    )  # fmt: skip
    _add_serve_bounds(p)
    add_keys(subparsers)
    add_import(subparsers)  # import FILE, in cli/transfer.py
    add_vault(subparsers)  # the vault group (vault/ room), in cli/vault.py
    p = _command(subparsers, "mcp", cmd_mcp,
                 "serve the memory to an MCP client (needs assocmem[mcp])")  # fmt: skip
    _tools_option(p)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default), or streamable HTTP on 127.0.0.1 at /mcp")  # fmt: skip
    p.add_argument("--port", type=int, default=8766,
                   help="the port of the HTTP transport (default: 8766)")  # fmt: skip
    p.add_argument("--role", default=None,
                   help="the role every call reads in (default: none; records written "
                   "for roles are then unreadable)")  # fmt: skip
    _vault_root_option(p, "a folder the client may index as a vault")
    p = _command(subparsers, "tools", cmd_tools,
                 "print the tools an agent is given, as JSON (needs assocmem[mcp])")  # fmt: skip
    p.add_argument("--format", choices=("mcp", "openai", "anthropic"), default="mcp",
                   help="as MCP lists them (default), or as OpenAI or Anthropic "
                   "function-calling tools")  # fmt: skip
    _tools_option(p)
    doc = "list or build embedders"
    embedders = subparsers.add_parser("embedders", help=doc, description=doc)
    which = embedders.add_subparsers(dest="embedders", required=True)
    _command(which, "list", cmd_embedders_list, "list embedder names")
    doc = "build the ONNX or static form of the packaged MiniLM (offline)"
    p = _command(which, "build", cmd_embedders_build, doc)
    p.add_argument("name", help="the form to build: minilm-onnx or minilm-static")
    p.add_argument("--model-dir", help="where to write it (default: user data dir)")
