"""The documentation's examples run as written, each on its own, and the site builds.

Every fenced block of README.md and of the pages under docs/ (but the benchmark pages,
which are written from the benchmark reports) is collected. Each Python block runs alone:
in a fresh process, in a fresh working directory, with nothing from the blocks before it,
so a reader can copy any one of them. An HTML comment on the line before a fence tells
this test how to run the block:

- ``<!-- readme-test: needs-server -->`` (python): the block runs against the server the
  page's ``server`` block starts, its URL and key written in place of the page's.
- ``<!-- readme-test: needs-postgres -->`` (python): the block runs on a fresh database
  of the suite's PostgreSQL, its URL in place of the page's.
- ``<!-- readme-test: run -->`` (bash): the block runs as one ``bash -e`` script.
- ``<!-- readme-test: server -->`` (bash): its commands run in order, ``serve`` in the
  background on a free port; the first key ``keys add`` prints is the client's. A page
  holds at most one.
- ``<!-- readme-test: not-run (why) -->`` (bash or python): installs, long-running,
  heavy, or on infrastructure a test machine does not have; it must say why.

In every bash block ``pip`` lines are installation, the test environment's job, and
``assocmem`` is the package this test imports. Every bash block must say which it is.
JSON blocks must parse. A fence must start its line: an indented one (inside a list or
an admonition) would be left out, so it is refused.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import assocmem
from tests.adapters.server_kit import free_port, wait_healthy
from tests.conftest import fresh_database

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Written from the benchmark reports: their commands take minutes, and tests/bench runs
# each benchmark shrunk.
GENERATED = DOCS / "benchmarks"
# The README is the front page: what it is, how to start, where to read on.
README_MAX_LINES = 250
FENCE = re.compile(
    r"^(?:<!-- readme-test: (?P<marker>[^>]*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)
FENCE_LINE = re.compile(r"^\s*```", re.MULTILINE)
SHELLS = ("bash", "sh", "shell", "console")
PYTHON_MARKERS = {"needs-server", "needs-postgres", "not-run"}
SHELL_MARKERS = {"run", "server", "not-run"}
# What the pages write where the test has a real value.
DOC_URL = "http://127.0.0.1:8765"
DOC_KEY = "am_..."
DOC_POSTGRES = "postgresql://assocmem@db.internal/memory"
SRC = Path(assocmem.__file__).resolve().parents[1]
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    page: Path
    lang: str
    body: str
    marker: str
    line: int

    @property
    def kind(self) -> str:
        """The marker's word, without the reason in parentheses."""
        return self.marker.split(" ", 1)[0]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    found = sorted(p for p in DOCS.rglob("*.md") if GENERATED not in p.parents)
    return [README, *found]


def page_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, m["lang"], m["body"], m["marker"] or "", text.count("\n", 0, m.start("body")))
        for m in FENCE.finditer(text)
    ]


def blocks(lang: tuple[str, ...], kind: str | None = None) -> list[Block]:
    return [
        b
        for page in pages()
        for b in page_blocks(page)
        if b.lang in lang and (kind is None or b.kind == kind)
    ]


def environment(home: Path) -> dict[str, str]:
    """The caller's environment, using this tree, with no assocmem settings and a
    throwaway home, so no example reads or writes the developer's memory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSOCMEM_")}
    paths = [str(SRC), env.get("PYTHONPATH", "")]
    env.update(PYTHONPATH=os.pathsep.join(p for p in paths if p), HOME=str(home))
    env["README_PYTHON"] = sys.executable
    return env


def run_python(block: Block, folder: Path, values: Mapping[str, str]) -> None:
    """Run one block alone, named by its page and line in tracebacks."""
    body = block.body
    for placeholder, value in values.items():
        body = body.replace(placeholder, value)
    runner = (
        "import sys\n"
        "exec(compile(sys.stdin.read(), sys.argv[1], 'exec'), {'__name__': '__main__'})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", runner, block.name], input=body, cwd=folder,
        env=environment(folder), capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, f"{block.name} failed:\n{done.stderr}"


def shell_lines(block: Block) -> list[str]:
    """The block's command lines, installation left to the environment."""
    lines = [line for line in block.body.splitlines() if line.strip()]
    return [line for line in lines if not line.lstrip().startswith("pip ")]


def run_shell(script: str, folder: Path) -> str:
    prelude = 'set -euo pipefail\nassocmem() { "$README_PYTHON" -m assocmem "$@"; }\n'
    done = subprocess.run(
        ["bash", "-c", prelude + script], cwd=folder, env=environment(folder),
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, f"{script!r} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


@contextmanager
def page_server(page: Path, folder: Path) -> Iterator[tuple[str, str]]:
    """The page's server block, run as written but on a free port: (url, first key)."""
    (block,) = [b for b in page_blocks(page) if b.lang in SHELLS and b.kind == "server"]
    lines = shell_lines(block)
    serve = [line for line in lines if " serve " in line]
    assert len(serve) == 1 and "--port 8765" in serve[0], "one `serve --port 8765` line"
    keys = [run_shell(line, folder) for line in lines if line not in serve]
    assert keys, "the server block adds a key with `assocmem keys add`"
    port = free_port()
    process = subprocess.Popen(
        ["bash", "-c", 'assocmem() { exec "$README_PYTHON" -m assocmem "$@"; }\n'
         + serve[0].replace("--port 8765", f"--port {port}")],
        cwd=folder, env=environment(folder), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url, keys[0].splitlines()[0]
    finally:
        process.terminate()
        process.wait(timeout=10)


def python_param(block: Block) -> object:
    marks = []
    if block.kind == "needs-postgres":
        marks.append(pytest.mark.postgres)
    if 'embedder="minilm"' in block.body:
        marks.append(pytest.mark.model)
    return pytest.param(block, id=block.name, marks=marks)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_says_how_it_runs(page: Path) -> None:
    found = page_blocks(page)
    text = page.read_text(encoding="utf-8")
    assert len(FENCE_LINE.findall(text)) == 2 * len(found), f"{page}: a fence this test misses"
    for block in found:
        allowed = SHELL_MARKERS if block.lang in SHELLS else PYTHON_MARKERS
        if block.lang in SHELLS or block.marker:
            assert block.kind in allowed, f"{block.name}: marker {block.marker!r}"
        if block.kind == "not-run":
            assert re.fullmatch(r"not-run \(.+\)", block.marker), f"{block.name}: say why"
    servers = [b for b in found if b.lang in SHELLS and b.kind == "server"]
    assert len(servers) <= 1, f"{page}: one server block at most"
    if any(b.kind == "needs-server" for b in found):
        assert servers, f"{page}: a needs-server block without the page's server block"


def test_the_readme_has_python_examples_and_stays_short() -> None:
    assert [b for b in page_blocks(README) if b.lang == "python"]
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the details go in docs/"


def test_the_readme_test_command_is_what_ci_runs() -> None:
    """The README's second set-up line installs the extras and runs what .ci/run does."""
    first = page_blocks(README)[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = re.search(r"pip install (.+?) &&", first.body.splitlines()[1])
    assert install and "test" in install[1], "the README's second line installs the test extras"
    assert f"pip install {install[1]}\n" in ci
    assert first.body.splitlines()[1].rstrip().endswith(".venv/bin/pytest")


@pytest.mark.parametrize(
    "block",
    [python_param(b) for b in blocks(("python",)) if b.kind != "not-run"],
)
def test_python_examples_run(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if 'embedder="minilm"' in block.body:
        pytest.importorskip("assocmem_minilm", reason="the default embedder needs the embed extra")
    values: dict[str, str] = {}
    if block.kind == "needs-postgres":
        assert DOC_POSTGRES in block.body
        values[DOC_POSTGRES] = fresh_database(request.getfixturevalue("postgres_server"))
    if block.kind != "needs-server":
        run_python(block, tmp_path, values)
        return
    pytest.importorskip("uvicorn")
    assert DOC_URL in block.body and DOC_KEY in block.body
    with page_server(block.page, tmp_path) as (url, key):
        run_python(block, tmp_path, {DOC_URL: url, DOC_KEY: key})


@pytest.mark.parametrize("block", [pytest.param(b, id=b.name) for b in blocks(SHELLS, "run")])
def test_shell_examples_exit_zero(block: Block, tmp_path: Path) -> None:
    run_shell("\n".join(shell_lines(block)), tmp_path)


@pytest.mark.parametrize("block", [pytest.param(b, id=b.name) for b in blocks(("json",))])
def test_json_examples_parse(block: Block) -> None:
    json.loads(block.body)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link, a page left out of the nav or a docstring
    mkdocstrings cannot render fails the build."""
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("ASSOCMEM_REQUIRE_DOCS"):
            pytest.fail("ASSOCMEM_REQUIRE_DOCS is set but mkdocs is not installed")
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]'")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{shlex.join(command)} failed:\n{done.stderr}"
