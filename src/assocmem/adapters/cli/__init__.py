"""The `assocmem` command line: one subcommand per `Memory` operation, plus the services.

The operation commands are generated from the registry (`assocmem.surface`) in
`operations`; how results print is in `formatters`; serve, keys, mcp, demo and
embedders are in `service`; plugins add theirs through the ``assocmem.cli``
entry-point group. Settings come from `assocmem.config.Config` (flag, then
``$ASSOCMEM_*``, then default).

Invariant: an `AssocmemError` prints one line and exits with the code of its class
(see `EXIT_CODES`); argparse's own usage errors exit with 2; a reader that closes
the output early (``assocmem export | head``) ends the command quietly with 141,
as a pipe's writer killed by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from assocmem import __version__
from assocmem.adapters.cli.operations import add_operations
from assocmem.adapters.cli.service import add_services
from assocmem.config import ENVIRONMENT, Config
from assocmem.errors import (
    AccessDenied,
    AssocmemError,
    InvalidInput,
    NotFound,
    StoreBusy,
    StoreError,
)

# Exit codes by error class, most specific first; argparse itself exits with 2.
EXIT_CODES: tuple[tuple[type[AssocmemError], int], ...] = (
    (InvalidInput, 2),
    (NotFound, 3),
    (AccessDenied, 6),
    (StoreBusy, 4),
    (StoreError, 5),
    (AssocmemError, 1),
)

# The exit status of a command whose reader closed its output (128 + SIGPIPE).
BROKEN_PIPE = 141

# Global options: (flag, help, type). Each defaults to None so `Config` can tell
# "not given" from a value and fall back to the environment.
GLOBAL_OPTIONS: tuple[tuple[str, str, type], ...] = (
    ("--db", "store path or postgresql:// URL (default: $ASSOCMEM_DB, else the data dir)", str),
    ("--agent", "agent id (default: $ASSOCMEM_AGENT, else default)", str),
    ("--project", "project id ('' is the global pool)", str),
    ("--channel", "channel ('' is shared)", str),
    (
        "--embedder",
        "embedder name for the vector arm (default: $ASSOCMEM_EMBEDDER, else none)",
        str,
    ),
    ("--embedder-url", "the HTTP embedder's API root, e.g. https://api.openai.com/v1", str),
    ("--embedder-model", "the HTTP embedder's model name", str),
    ("--embedder-dims", "the HTTP embedder's vector width", int),
    ("--embedder-key-env", "NAME of the environment variable holding the HTTP embedder's key", str),
)


def _global_help(flag: str, text: str) -> str:
    variable = ENVIRONMENT.get(flag[2:].replace("-", "_"))
    if variable and variable not in text:
        text += f" (default: ${variable})"
    return text


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, including subcommands from plugins."""
    parser = argparse.ArgumentParser(prog="assocmem", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    for flag, text, kind in GLOBAL_OPTIONS:
        parser.add_argument(flag, type=kind, default=None, help=_global_help(flag, text))
    parser.add_argument("--json", action="store_true", help="print JSON")
    sub = parser.add_subparsers(dest="command", required=True)
    add_operations(sub)
    add_services(sub)
    for plugin in entry_points(group="assocmem.cli"):
        plugin.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``assocmem`` command."""
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "run"):
            code: int = args.run(args, Config.load(args))
        else:  # a plugin's command (``bench``) reads its own arguments
            code = args.handler(args)
        sys.stdout.flush()  # inside the try: the last buffered lines may meet a closed pipe
        return code
    except BrokenPipeError:
        # The reader has gone: stop, and point stdout at nothing so the interpreter's
        # own flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    except AssocmemError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


if __name__ == "__main__":
    raise SystemExit(main())
