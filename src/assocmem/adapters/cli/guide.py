"""How the command line explains itself: the parser class, the grouped command list, ``help``.

Invariant: every parser of the command line is a `Parser` (argparse hands a parser's
class to its subcommands, plugins' included), so no parser accepts an abbreviated
flag and every option's help ends with its default. ``assocmem --help`` lists each
command once, on one line, under the heading of its `SECTIONS` entry; a command no
entry places (a plugin's) is listed under ``other``, never left out.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import sys
from collections.abc import Iterator
from typing import Any

from assocmem.surface import operations

# Headings of ``assocmem --help``, in order. An operation's section is its registry
# group (`surface.GROUPS`), except where `PLACED` puts it: the registry's admin group
# is too long for one screen, so it is split by what its commands do.
SECTIONS: dict[str, str] = {
    "start": "start: where to begin",
    "core": "core: write, read and rate (what an agent does every day)",
    "graph": "graph: declared entities and relations, learned links",
    "inspection": "inspection: look inside, export, import",
    "lifecycle": "lifecycle: archive, keep, consolidate",
    "trust": "trust: standing, attribution, cases",
    "vault": "vault: a folder of Markdown notes",
    "procedures": "procedures: learned how-tos and graduation",
    "service": "service: the HTTP server and its dashboard, API keys, MCP, embedders",
    "bench": "bench: measurements (the assocmem-bench package)",
    "other": "other: commands added by plugins",
}
PLACED: dict[str, str] = {
    "help": "start",
    "demo": "start",
    "write-many": "core",
    "stats": "inspection",
    "list-memories": "inspection",
    "inspect": "inspection",
    "feedback-log": "inspection",
    "health": "inspection",
    "export": "inspection",
    "export-all": "inspection",
    "import": "inspection",
    "import-lines": "inspection",
    "archive": "lifecycle",
    "restore": "lifecycle",
    "protect": "lifecycle",
    "end-task": "lifecycle",
    "retain": "lifecycle",
    "consolidate": "lifecycle",
    "consolidate-clusters": "lifecycle",
    "value-by-cohort": "lifecycle",
    "vault": "vault",
    "serve": "service",
    "keys": "service",
    "mcp": "service",
    "tools": "service",
    "embedders": "service",
    "bench": "bench",
}
# The column a command's summary starts at in the list.
NAME_WIDTH = 24
# A mistyped choice among at least this many is answered without the whole list.
LONG_CHOICES = 12

EPILOG = """\
exit codes:
  0    done
  1    nothing found (read, reconstruct, history, relevant-notes with no hit),
       or import took only part of its file
  2    usage error or invalid input (the message names the flag)
  3    something named does not exist (a memory id, an entity, a key)
  4    the store is busy        5  the store failed        6  access denied
  7    any other error (an embedder, a missing optional dependency)
  130  interrupted              141  the reader closed the output (| head)

Every command prints one JSON document on stdout under --json (export prints
JSON lines always); messages and logs go to stderr. --db is where the store
is: a SQLite file path or a postgresql:// URL.

The list above holds every command, one line each, so it can be searched in
one place; each group fits one screen. `assocmem help GROUP` prints one group
alone, `assocmem help COMMAND` (or `assocmem COMMAND --help`) a command's
arguments."""

# Sphinx roles (:class:`~x.Y`), double and single back-quotes: shown as their text.
MARKUP = re.compile(r"(?::[\w:]+:)?(``?)~?([^`]+?)\1")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: ``:meth:`~a.B.c``` reads ``c``,
    ````x```` and ```x``` read ``x``."""

    def shown(match: re.Match[str]) -> str:
        body = match.group(2)
        return body.rsplit(".", 1)[-1] if match.group(0).startswith(":") else body

    return MARKUP.sub(shown, text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions keep their line breaks; an option's help ends with its default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default in (None, False, argparse.SUPPRESS)
            or default == []
        ):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """Every parser of the command line: no abbreviated flags (``--k`` must not stand for
    ``--kinds``), `HelpFormatter`, and a short answer to a mistyped command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        # argparse lists every choice of a mistyped command: ~70 names on one line.
        head, listed, choices = message.partition(" (choose from")
        if "invalid choice" in head and listed and choices.count(",") >= LONG_CHOICES:
            names = re.findall(r"'([^']*)'", choices)
            typed = re.findall(r"'([^']*)'", head)
            close = difflib.get_close_matches(typed[-1], names, n=3) if typed else []
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            message = f"{head}; {hint}see `{self.prog} --help`"
        super().error(message)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name (none for a command without them)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def every_parser(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every subcommand's parser below it."""
    yield parser
    for sub in subcommands(parser).values():
        yield from every_parser(sub)


def summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each subcommand's one-line help, markup stripped."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {
                choice.dest: plain(str(choice.help or "")).replace("%%", "%")
                for choice in action._get_subactions()
            }
    return {}


def section(command: str) -> str:
    """The `SECTIONS` key ``command`` is listed under."""
    if command in PLACED:
        return PLACED[command]
    operation = operations().get(command.replace("-", "_"))
    return operation.group if operation and operation.group in SECTIONS else "other"


def sections(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each section's lines (its heading first), sections without commands left out."""
    width = max(60, shutil.get_terminal_size((80, 24)).columns - 1)
    lines: dict[str, list[str]] = {key: [f"{heading}:"] for key, heading in SECTIONS.items()}
    for name, text in summaries(parser).items():
        room = width - NAME_WIDTH
        if len(text) > room:  # one line each: the whole sentence is in COMMAND --help
            text = text[: room - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
        lines[section(name)].append(f"  {name:<{NAME_WIDTH - 3}} {text}".rstrip())
    return {key: rows for key, rows in lines.items() if len(rows) > 1}


def command_list(parser: argparse.ArgumentParser) -> str:
    """Every section's lines, blank-line separated."""
    return "\n\n".join("\n".join(rows) for rows in sections(parser).values())


def cmd_help(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``assocmem help [GROUP|COMMAND]``: one group's screen, a command's help, or all."""
    topic = args.topic
    groups = sections(parser)
    if topic is None:
        parser.print_help()
    elif topic in groups:
        print("\n".join(groups[topic]))
        print("\n`assocmem COMMAND --help` shows a command's arguments.")
    elif topic in subcommands(parser):
        subcommands(parser)[topic].print_help()
    else:
        print(f"error: no group or command {topic!r}; groups: {', '.join(groups)}", file=sys.stderr)
        return 2
    return 0
