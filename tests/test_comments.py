"""Comments and docstrings say why the code is as it is, never what one run saw.

A run note is true of one machine, one checkout or one day: the machine a figure was
measured on, a path outside the repository, a number of the seed documents the work
started from, a timing measured once, an issue or stop of the work's own history.
Figures belong in the benchmark reports, and a comment names the command that
measures them instead. Every comment and docstring under src/ is read with `tokenize`
and `ast` and checked against `RUN_NOTES`; a comment's consecutive lines are read as
one text, so a note split over lines is found whole."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A timing with its unit, as a comment would quote one.
_UNIT = r"\s?(?:ns|µs|us|ms|s|texts/s|writes/s|reads/s)\b"
_TIME = rf"\d[\d.,]*{_UNIT}"

# (what the note is, the pattern that finds it), matched case-insensitively.
RUN_NOTES: tuple[tuple[str, str], ...] = (
    ("the machine a run was on", r"\bthis (?:[\w-]+ )?machine\b"),
    (
        "the core count of the machine a run was on",
        r"\b(?:\d+|two|four|eight)-core\b|\bon (?:\d+|two|three|four|eight) (?:shared )?cores\b",
    ),
    ("a path outside the repository", r"\.\./shared\b|(?<![\w.])/(?:work|tmp)/"),
    ("a number of the seed documents", r"\bseeds? \d{3}\b"),
    ("the seed documents", r"\bthe seed's\b"),
    ("a timing set against another, measured once", rf"{_TIME}[^.;]{{0,60}}?\bagainst [~≈]?\d"),
    ("a rate set against another, measured once", rf"\b\d[\d.,]* against \d[\d.,]*{_UNIT}"),
    ("a timing taken where the comment was written", rf"{_TIME} here\b"),
    ("an issue or stop of the work's history", r"\b(?:issue|stop) #?\d+\b"),
)


class Text:
    """One comment block or docstring: its lines joined by spaces, each line's start
    remembered, so a match spanning lines still names the line it starts on."""

    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.starts: list[int] = []
        self.numbers: list[int] = []
        parts: list[str] = []
        offset = 0
        for number, line in lines:
            self.starts.append(offset)
            self.numbers.append(number)
            parts.append(line)
            offset += len(line) + 1
        self.text = " ".join(parts)

    def line_at(self, offset: int) -> int:
        return self.numbers[bisect.bisect_right(self.starts, offset) - 1]


def texts(source: str) -> Iterator[Text]:
    """Each comment block (consecutive comment lines) and each docstring of ``source``."""
    block: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        if block and token.start[0] != block[-1][0] + 1:
            yield Text(block)
            block = []
        block.append((token.start[0], token.string.lstrip("#").strip()))
    if block:
        yield Text(block)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                first = node.body[0].lineno
                lines = docstring.splitlines()
                yield Text([(first + i, line.strip()) for i, line in enumerate(lines)])


def run_notes(source: str) -> list[tuple[int, str, str]]:
    """``(line, what, text)`` for each run note in ``source``'s comments and docstrings."""
    found = []
    for text in texts(source):
        for what, pattern in RUN_NOTES:
            for match in re.finditer(pattern, text.text, re.IGNORECASE):
                found.append((text.line_at(match.start()), what, match.group()))
    return sorted(found)


def test_no_comment_or_docstring_under_src_carries_a_run_note() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}: {quoted!r}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for line, what, quoted in run_notes(path.read_text(encoding="utf-8"))
    ]
    assert not found, "run notes in comments or docstrings:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "comment",
    [
        "# on this 2-core machine the pool only waits",
        "# (`assocmem bench embed` on 2 shared cores: the default thread count)",
        "# the data is in ../shared/spec",
        "# see /work/main/notes",
        "# Half-life of each kind (seed 003, rule 3)",
        "# the seed's plain product",
        "# cover density cost 1.5 µs a\n# matched row against 0.08 µs",
        "# one thread: 125 against 79 texts/s",
        "# a checkpoint takes up to ~20 ms here.",
        "# fixed in issue 42",
    ],
)
def test_each_kind_of_run_note_is_found(comment: str) -> None:
    source = f"VALUE = 1\n{comment}\nOTHER = 2\n"
    assert {line for line, _, _ in run_notes(source)} == {2}
    assert run_notes(f'"""{comment.replace("#", "")}"""\n') != []


@pytest.mark.parametrize(
    "comment",
    [
        "# a store that records a migration this code does not know",
        "# tokens begun on this connection",
        "# the default thread count is min(4, os.cpu_count())",
        "# each embedding call runs on one core; a caller with idle cores passes threads",
        "# a seeded sample of 300",
        "# 5 s timeout against a slow uplink",
        "# the files under tmp_path, or /var/tmp",
        "# a queue drained at 10 reads/s",
    ],
)
def test_legitimate_text_is_not_a_run_note(comment: str) -> None:
    assert run_notes(f"VALUE = 1\n{comment}\n") == []


def test_a_string_that_is_not_a_docstring_is_not_read() -> None:
    assert run_notes('MESSAGE = "measured on this machine"\n') == []
