"""One CLI subcommand per registry operation, generated from `assocmem.surface`.

Each parameter of each operation becomes one argument, shaped by its annotation:
scalars take one value, a bool is ``--x/--no-x``, a sequence of scalars is positional
``nargs`` or a repeatable flag, a pair takes two values, and anything nested
(mappings, ``Any``, sequences of objects) is one JSON argument.

Invariant: no default is copied here. An argument the user leaves out is left out of
the call, so `Memory` applies its own default; the registry's default only appears
in the help text.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal

from assocmem.adapters.cli import formatters
from assocmem.adapters.cli.guide import plain
from assocmem.config import Config, store_target
from assocmem.errors import InvalidInput
from assocmem.memory import Memory
from assocmem.surface import Operation, Parameter, operations

# Operation arguments live under this prefix in the namespace, so that no parameter
# name can collide with a global option or a plugin's flag.
DEST = "op."
# Spellings the CLI accepted before it was generated, kept working.
ALIASES: dict[str, tuple[str, ...]] = {
    "concepts": ("-c", "--concept"),
    "query_concepts": ("-c", "--concept"),
    "tags": ("--tag",),
    "kinds": ("--kind",),
    "relation_ids": ("--relation",),
    "mentions": ("--mention",),
    "anchor_ref": ("--anchor",),
}
NEGATIONS = {("protect", "protected"): "--unprotect"}
# List flags that take several values at once (``update ID --tags a b``);
# safe only where no positional argument can follow the flag.
SPREAD: frozenset[tuple[str, str]] = frozenset({("update", "tags"), ("update", "access")})
# What the annotation cannot say: parameters that are one or many (a, b) pairs, with
# the names of their halves. ``key`` is typed ``Sequence[str]`` but is always a pair.
PAIRS: dict[str, tuple[str, str]] = {
    "key": ("SUBJECT", "RELATION"),
    "mentions": ("ENTITY", "MEMREF"),
}
SCALARS: dict[Any, type] = {str: str, int: int, float: float}
# The exit status of a command that ran and found nothing, and the lookups that end
# with it: what a script tests (``if assocmem read ...; then``). The result still
# prints as usual (a read's handle can rate what it missed); a note goes to stderr.
NOTHING_FOUND = 1
EMPTY: dict[str, Callable[[Any], bool]] = {
    "read": lambda result: not result.items,
    "reconstruct": lambda result: not result.items,
    "history": lambda result: not result,
    "relevant_notes": lambda result: not result,
}

Kind = Literal["scalar", "bool", "list", "pair", "pairs", "json"]


@dataclass(frozen=True)
class Shape:
    """How one parameter is spelled on the command line."""

    kind: Kind
    convert: type = str


def shape(parameter: Parameter) -> Shape:
    """The argument shape of ``parameter``, read from its annotation."""
    if parameter.variadic:
        return Shape("list", SCALARS.get(parameter.annotation, str))
    options = _without_none(parameter.annotation)
    if parameter.name in PAIRS:
        return Shape("pairs" if _is_sequence_of_tuples(options) else "pair")
    if options == [bool]:
        return Shape("bool")
    scalar = next((SCALARS[o] for o in options if o in SCALARS), None)
    if scalar is not None and all(o in SCALARS or _is_time(o) for o in options):
        return Shape("scalar", scalar)
    if len(options) == 1 and typing.get_origin(options[0]) in (Sequence, list, tuple):
        (element, *_) = typing.get_args(options[0]) or (Any,)
        if element in SCALARS:
            return Shape("list", SCALARS[element])
    return Shape("json")


def _without_none(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _is_time(option: Any) -> bool:
    # Times travel as ISO 8601 text; `Memory` parses them.
    return option is datetime


def _is_sequence_of_tuples(options: list[Any]) -> bool:
    args = typing.get_args(options[0]) if len(options) == 1 else ()
    return bool(args) and typing.get_origin(args[0]) is tuple


def flag(parameter: Parameter) -> str:
    """The main flag of a non-positional parameter: ``-k`` or ``--max-hops``."""
    name = parameter.name.replace("_", "-")
    # ``-h`` is help (monitor's CUSUM threshold ``h`` is ``--h``).
    return f"-{name}" if len(name) == 1 and name != "h" else f"--{name}"


def add_operation(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    operation: Operation,
    command: str | None = None,
) -> argparse.ArgumentParser:
    """Add the subcommand of ``operation`` (named ``command``, default the operation's),
    with one argument per parameter."""
    parser = subparsers.add_parser(
        command or operation.command,
        help=plain(summary(operation)),
        description=plain(operation.doc),
    )
    taken = {flag(p) for p in operation.parameters if p.name not in operation.positional}
    for parameter in operation.parameters:
        if parameter.name in operation.positional:
            _add_positional(parser, parameter)
        else:
            aliases = [a for a in _aliases(parameter) if a not in taken]
            taken.update(aliases)
            _add_flag(parser, parameter, aliases, (operation.name, parameter.name) in SPREAD)
            negation = NEGATIONS.get((operation.name, parameter.name))
            if negation:
                parser.add_argument(
                    negation, dest=DEST + parameter.name, action="store_false",
                    default=argparse.SUPPRESS, help=f"the same as --no-{flag(parameter)[2:]}",
                )  # fmt: skip
    parser.set_defaults(run=partial(run_operation, operation))
    if operation.name == "export":  # ``export --all`` runs `export_all`
        parser.add_argument("--all", dest="whole_store", action="store_true",
                            help="the whole store: learned links, lessons, the feedback log"
                            " and the declared graph too (see export-all)")  # fmt: skip
    return parser


def _aliases(parameter: Parameter) -> list[str]:
    # A one-letter name takes its long spelling too (``-k 5`` and ``--k 5``).
    main = flag(parameter)
    long = [f"-{main}"] if not main.startswith("--") else []
    return [*ALIASES.get(parameter.name, ()), *long]


def summary(operation: Operation) -> str:
    """The first sentence of the operation's docstring (`Operation.summary` is its first
    line, which may stop mid-sentence)."""
    paragraph = " ".join(operation.doc.split("\n\n")[0].split())
    head, dot, _ = paragraph.partition(". ")
    return head + "." if dot else paragraph


def _help(parameter: Parameter) -> str:
    text = parameter.doc
    default = parameter.default
    if isinstance(default, bool | int | float | str) and "default" not in text:
        text += f" (default: {json.dumps(default)})"
    return text.replace("%", "%%")


def _add_positional(parser: argparse.ArgumentParser, parameter: Parameter) -> None:
    form = shape(parameter)
    options: dict[str, Any] = {"metavar": parameter.name, "help": _help(parameter)}
    if form.kind == "list":
        options.update(type=form.convert, nargs="+" if parameter.required else "*")
    elif form.kind == "pair":
        options["nargs"] = 2  # a tuple metavar breaks argparse's help for positionals
    else:
        options.update(type=form.convert if form.kind == "scalar" else str)
        if not parameter.required:
            options["nargs"] = "?"
    parser.add_argument(DEST + parameter.name, **options)


def _add_flag(
    parser: argparse.ArgumentParser, parameter: Parameter, aliases: list[str], spread: bool = False
) -> None:
    form = shape(parameter)
    options: dict[str, Any] = {
        "dest": DEST + parameter.name,
        "default": argparse.SUPPRESS,
        "help": _help(parameter),
        "metavar": parameter.name.upper(),
    }
    if parameter.required:
        options["required"] = True
    if form.kind == "bool":
        options["action"] = argparse.BooleanOptionalAction
    elif form.kind == "scalar":
        options.update(type=form.convert)
    elif form.kind == "list" and spread:
        options.update(type=form.convert, action="extend", nargs="+")
    elif form.kind == "list":
        options.update(type=form.convert, action="append", help=f"{options['help']} (repeat)")
    elif form.kind in ("pair", "pairs"):
        options.update(nargs=2, metavar=PAIRS[parameter.name])
        if form.kind == "pairs":
            options.update(action="append", help=f"{options['help']} (repeat)")
    else:
        options.update(metavar="JSON")
    parser.add_argument(flag(parameter), *aliases, **options)


def call_arguments(operation: Operation, args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments the user gave, converted; absent ones are left out."""
    given = vars(args)
    call: dict[str, Any] = {}
    for parameter in operation.parameters:
        value = given.get(DEST + parameter.name)
        if value is None or (value == [] and not parameter.required):
            continue
        call[parameter.name] = _convert(operation, parameter, value)
    return call


def _convert(operation: Operation, parameter: Parameter, value: Any) -> Any:
    kind = shape(parameter).kind
    positional = parameter.name in operation.positional
    if kind == "json" or (kind == "pairs" and positional):
        return parse_json(value, parameter.name, parameter.name if positional else flag(parameter))
    if kind == "pairs":
        return [tuple(pair) for pair in value]
    return value


def parse_json(value: str, field: str, shown: str) -> Any:
    """``value`` parsed as JSON, or `InvalidInput` naming ``field``."""
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{shown} must be JSON: {exc.msg}", field=field) from exc


def invoke(memory: Memory, operation: Operation, call: Mapping[str, Any]) -> Any:
    """Call ``operation`` on ``memory``; a ``*args`` parameter and those before it go
    by position, since Python allows nothing else."""
    names = [p.name for p in operation.parameters]
    variadic = next((p.name for p in operation.parameters if p.variadic), None)
    if variadic is None:
        return getattr(memory, operation.name)(**call)
    before = names[: names.index(variadic)]
    positional = [call[n] for n in before if n in call] + list(call.get(variadic, ()))
    keywords = {n: v for n, v in call.items() if n not in before and n != variadic}
    return getattr(memory, operation.name)(*positional, **keywords)


def run_operation(operation: Operation, args: argparse.Namespace, config: Config) -> int:
    """Parse, call one `Memory` method, print: the whole of an operation command."""
    if getattr(args, "whole_store", False):  # export --all
        operation = operations()["export_all"]
    call = call_arguments(operation, args)
    with open_memory(config) as memory:
        result = invoke(memory, operation, call)
        if isinstance(result, Iterator):
            for line in formatters.json_lines(result):
                print(line)
            return 0
        data = formatters.to_json(operation.name, result)
        text = formatters.human(operation.name, result, call)
    if args.json or text:  # an empty read still prints its handle, for feedback
        emit(args, data, text)
    if operation.name in EMPTY and EMPTY[operation.name](result):
        print(f"nothing found ({operation.command})", file=sys.stderr)
        return NOTHING_FOUND
    return 0


def open_memory(config: Config) -> Memory:
    """The `Memory` the configuration names."""
    return Memory(
        store_target(config.db),
        agent_id=config.agent,
        project_id=config.project,
        channel=config.channel,
        embedder=config.build_embedder(),
    )


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as JSON under ``--json``, else ``text``."""
    print(formatters.dumps(data) if args.json else text)


def add_operations(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """One subcommand per operation of the registry, in its order."""
    for operation in operations().values():
        add_operation(subparsers, operation)
