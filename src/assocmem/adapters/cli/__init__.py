"""The `assocmem` command line: one subcommand per `Memory` operation, plus the services.

The operation commands are generated from the registry (`assocmem.surface`) in
`operations`; how results print is in `formatters`; serve, keys, mcp, demo and
embedders are in `service`; plugins add theirs through the ``assocmem.cli``
entry-point group. Settings come from `assocmem.config.Config` (flag, then
``$ASSOCMEM_*``, then default).

Invariant: an `AssocmemError` prints one line and exits with the code of its class
(see `EXIT_CODES`); argparse's own usage errors exit with 2; a command that found
nothing exits with 1 (`NOTHING_FOUND`); a reader that closes the output early
(``assocmem export | head``) ends the command quietly with 141, as a pipe's writer
killed by SIGPIPE does. Results go to stdout, everything else (messages, logs,
progress) to stderr. The exit codes are listed for users in `guide.EPILOG`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import entry_points

from assocmem import __version__
from assocmem.adapters.cli import guide
from assocmem.adapters.cli.operations import NOTHING_FOUND, add_operations
from assocmem.adapters.cli.service import add_services
from assocmem.config import ENVIRONMENT, Config
from assocmem.errors import (
    AccessDenied,
    AssocmemError,
    DependencyMissing,
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
    (AssocmemError, 7),
)
__all__ = ["BROKEN_PIPE", "EXIT_CODES", "INTERRUPTED", "NOTHING_FOUND", "build_parser", "main"]

# The exit status of a command stopped with Ctrl-C (128 + SIGINT).
INTERRUPTED = 130

# The exit status of a command whose reader closed its output (128 + SIGPIPE).
BROKEN_PIPE = 141

# Global options: (flag, help, type). Each defaults to None so `Config` can tell
# "not given" from a value and fall back to the environment.
GLOBAL_OPTIONS: tuple[tuple[str, str, type], ...] = (
    (
        "--db",
        "where the store is: a SQLite file path or a postgresql:// URL (default: $ASSOCMEM_DB,"
        " else memory.db in the data dir)",
        str,
    ),
    ("--agent", "agent id (default: $ASSOCMEM_AGENT, else default)", str),
    ("--project", "project id (default: '', the global pool)", str),
    ("--channel", "channel (default: '', shared)", str),
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
    parser: argparse.ArgumentParser = guide.Parser(
        prog="assocmem", usage="assocmem [OPTIONS] COMMAND [ARGS]", epilog=guide.EPILOG
    )
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    for flag, text, kind in GLOBAL_OPTIONS:
        parser.add_argument(flag, type=kind, default=None, help=_global_help(flag, text))
    _output_options(parser, given=False)
    # The subcommands are listed by `guide.sections`, grouped, in the description.
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="assocmem",
                                help=argparse.SUPPRESS)  # fmt: skip
    doc = "list one group of commands (or all), or show one command's help"
    topic = sub.add_parser("help", help=doc, description=doc)
    topic.add_argument("topic", nargs="?", metavar="GROUP|COMMAND",
                       help="a group name (core, graph, trust, ...) or a command")  # fmt: skip
    topic.set_defaults(run=lambda args, config: guide.cmd_help(parser, args))
    add_operations(sub)
    add_services(sub)
    # One plugin seen through two installs' metadata (an old build's beside a new one)
    # names the same target twice: it registers once.
    plugins = {(p.name, p.value): p for p in entry_points(group="assocmem.cli")}
    for plugin in plugins.values():
        plugin.load()(sub)
    if "bench" not in sub.choices:
        _bench_missing(sub)
    for command in guide.every_parser(parser):
        if command is not parser:
            _output_options(command, given=True)
    parser.description = (
        f"assocmem: long-term associative memory for AI agents.\n\n{guide.command_list(parser)}"
    )
    return parser


# `assocmem bench` comes from the assocmem-bench distribution (bench/ in the repository),
# installed beside assocmem; without it the command says how to install it.
BENCH_MISSING = (
    "assocmem bench needs the assocmem-bench package: from a clone of assocmem, "
    "pip install -e ./bench"
)


def _bench_missing(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doc = "run a benchmark (needs assocmem-bench: from a clone, pip install -e ./bench)"
    parser = sub.add_parser("bench", help=doc, description=doc)
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(handler=_no_bench)


def _no_bench(args: argparse.Namespace) -> int:
    raise DependencyMissing(BENCH_MISSING)


# The levels --log-level takes, most verbose first.
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def _output_options(parser: argparse.ArgumentParser, *, given: bool) -> None:
    """``--json``, ``-v`` and ``--log-level``: global, and on every command too (``given``)
    where it has none of its own, so they work before or after the command's name."""
    # SUPPRESS on a command: left out there, it must not undo the same flag given before.
    unset = argparse.SUPPRESS
    taken = parser._option_string_actions
    if "--json" not in taken:
        parser.add_argument("--json", action="store_true", default=unset if given else False,
                            help="print the result as one JSON document on stdout")  # fmt: skip
    if "-v" not in taken:
        parser.add_argument("-v", "--verbose", action="count", default=unset if given else 0,
                            help="log more to stderr: -v info, -vv debug "
                            "(default: warnings only)")  # fmt: skip
    if "--log-level" not in taken:
        parser.add_argument("--log-level", type=str.lower, choices=LOG_LEVELS, metavar="LEVEL",
                            default=unset if given else None,
                            help=f"log at LEVEL and above to stderr: {', '.join(LOG_LEVELS)} "
                            "(overrides -v; default: warning)")  # fmt: skip


@contextmanager
def logging_to_stderr(args: argparse.Namespace) -> Iterator[None]:
    """The library's records at the chosen level go to stderr while the command runs;
    the ``assocmem`` logger is put back as it was after (``main`` may run in-process)."""
    verbosity = ("warning", "info", "debug")[min(args.verbose, 2)]
    name = args.log_level or verbosity
    level = logging.getLevelName(name.upper())
    if not isinstance(level, int):  # serve's own --log-level takes any word
        raise InvalidInput(f"unknown log level {name!r}", field="log_level")
    package = logging.getLogger("assocmem")
    saved = package.handlers[:], package.level, package.propagate
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    package.handlers[:], package.propagate = [handler], False
    package.setLevel(level)
    try:
        yield
    finally:
        package.handlers[:], package.level, package.propagate = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``assocmem`` command."""
    args = build_parser().parse_args(argv)
    try:
        with logging_to_stderr(args):
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
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except AssocmemError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


if __name__ == "__main__":
    raise SystemExit(main())
