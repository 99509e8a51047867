"""The benchmarks page is what its committed reports render, byte for byte each time; a
new report of a known bench gets its own section; a report it cannot read is refused
by name before anything is written."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from assocmem_bench import cli, render_docs
from assocmem_bench.render_docs import UnreadableResults

from assocmem.adapters.cli import main
from assocmem.errors import DependencyMissing

pytest.importorskip("matplotlib")  # the docs extra draws the plots

DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks"


def _results(tmp_path: Path) -> Path:
    """A copy of the committed reports, where the page rendered beside them links them."""
    results = tmp_path / "results"
    shutil.copytree(DOCS / "results", results)
    return results


def _software(png: bytes) -> str | None:
    """The ``Software`` text chunk of a PNG: the matplotlib that drew it."""
    at = 8  # past the signature
    while at < len(png):
        length = int.from_bytes(png[at : at + 4], "big")
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if kind == b"tEXt" and data.startswith(b"Software\0"):
            return data.removeprefix(b"Software\0").decode("latin-1")
        at += 12 + length
    return None


def test_the_committed_page_is_what_its_reports_render(tmp_path: Path) -> None:
    render_docs.render(_results(tmp_path), tmp_path)
    page = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert page == (DOCS / "index.md").read_text(encoding="utf-8"), (
        "docs/benchmarks/index.md has drifted from its reports: run `assocmem bench render-docs`"
    )
    committed = sorted(path.name for path in (DOCS / "plots").glob("*.png"))
    assert sorted(path.name for path in (tmp_path / "plots").glob("*.png")) == committed
    for name in committed:
        assert f"(plots/{name})" in page
        ours, theirs = (
            (tmp_path / "plots" / name).read_bytes(),
            (DOCS / "plots" / name).read_bytes(),
        )
        if _software(ours) != _software(theirs):
            pytest.skip(f"{name} was drawn by {_software(theirs)}, this is {_software(ours)}")
        assert ours == theirs, f"{name} has drifted: run `assocmem bench render-docs`"


def test_rendering_twice_writes_the_same_bytes_and_drops_stale_plots(tmp_path: Path) -> None:
    results = _results(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    (second / "plots").mkdir(parents=True)
    (second / "plots" / "gone-recall.png").write_bytes(b"a plot no report draws any more")
    for out in (first, second):
        argv = ["bench", "render-docs", "--results", str(results), "--out", str(out)]
        assert main(argv) == 0
    files = sorted(path.relative_to(first) for path in first.rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(second) for path in second.rglob("*") if path.is_file())
    assert Path("index.md") in files and any(path.suffix == ".png" for path in files)
    for path in files:
        assert (first / path).read_bytes() == (second / path).read_bytes(), path


def test_a_new_report_of_a_known_bench_gets_its_own_section(tmp_path: Path) -> None:
    results = _results(tmp_path)
    report = json.loads((results / "locomo-none.json").read_text(encoding="utf-8"))
    report["profiles"]["general"]["assocmem"]["2 temporal"]["recall@10"] = 0.1234
    (results / "locomo-other.json").write_text(json.dumps(report), encoding="utf-8")
    render_docs.render(results, tmp_path)
    page = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert "### `locomo-other.json`" in page
    assert "[locomo-other.json](results/locomo-other.json)" in page
    assert "| 0.123 |" in page
    assert (tmp_path / "plots" / "locomo-other-recall.png").is_file()


def test_a_section_names_the_package_versions_its_report_ran_with(tmp_path: Path) -> None:
    results = _results(tmp_path)
    report = json.loads((results / "locomo-none.json").read_text(encoding="utf-8"))
    report["environment"]["packages"] = {"onnxruntime": "9.8.7", "numpy": "6.5"}
    (results / "locomo-other.json").write_text(json.dumps(report), encoding="utf-8")
    render_docs.render(results, tmp_path)
    page = (tmp_path / "index.md").read_text(encoding="utf-8")
    section = page.split("### `locomo-other.json`")[1].split("###")[0]
    assert "- Packages: onnxruntime 9.8.7, numpy 6.5\n" in section


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("locomo-broken.json", '{"profiles": ', "not a JSON file"),
        ("locomo-list.json", "[1, 2]", "not a JSON object"),
        ("scale-empty.json", '{"runs": {"sqlite": {"1000": {}}}}', "not a scale report"),
        ("mystery.json", "{}", "no bench this page shows wrote it"),
        ("notes.json", '{"benchmark": "notes"}', "no bench this page shows wrote it"),
    ],
)
def test_a_report_it_cannot_read_is_refused_by_name(
    tmp_path: Path, name: str, text: str, why: str
) -> None:
    results = _results(tmp_path)
    (results / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(UnreadableResults, match=why) as caught:
        render_docs.render(results, out)
    assert caught.value.path == results / name and name in caught.value.message
    assert caught.value.field == "results"
    assert not (out / "index.md").exists()


def test_the_command_names_the_refused_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _results(tmp_path)
    (results / "clients-cut.json").write_text('{"transports": {"get": 1}}', encoding="utf-8")
    argv = ["bench", "render-docs", "--results", str(results), "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "clients-cut.json" in capsys.readouterr().err


def test_a_learning_report_of_several_embedders_gets_a_table_each(tmp_path: Path) -> None:
    results = _results(tmp_path)
    section = json.loads((results / "learning-none.json").read_text(encoding="utf-8"))
    other = {**section, "config": {**section["config"], "embedder": "other"}}
    both = {
        "config": {"embedders": ["none", "other"]},
        "embedders": {"none": section, "other": other},
    }
    (results / "learning-both.json").write_text(json.dumps(both), encoding="utf-8")
    render_docs.render(results, tmp_path)
    page = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert "### `learning-both.json`" in page and "Embedder: other;" in page
    assert page.count("Embedder: none;") == 2  # learning-none.json's and this one's
    for name in ("learning-both-curves-none.png", "learning-both-curves-other.png"):
        assert (tmp_path / "plots" / name).is_file()


def test_a_bench_report_records_the_command_that_reproduces_it(tmp_path: Path) -> None:
    out = tmp_path / "statements.json"
    assert main(["bench", "statements", "--memories", "20", "--out", str(out)]) == 0
    run = json.loads(out.read_text(encoding="utf-8"))["run"]
    assert run["command"] == f"assocmem bench statements --out {out} --memories 20"
    again = tmp_path / "again.json"
    argv = shlex.split(run["command"].replace(str(out), str(again)))
    assert argv[0] == "assocmem" and main(argv[1:]) == 0
    report = json.loads(again.read_text(encoding="utf-8"))
    assert report["text_read"]["memories"] == 20
    assert report["run"]["command"] == run["command"].replace(str(out), str(again))
    assert run["commit"] is None or len(run["commit"].removesuffix("-dirty")) >= 7


def test_without_matplotlib_the_refusal_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.style", None)  # as if it were not installed
    with pytest.raises(DependencyMissing, match=r"assocmem\[docs\]"):
        render_docs.render(_results(tmp_path), tmp_path / "out")
    assert not (tmp_path / "out" / "index.md").exists()


def test_a_learning_report_with_a_locomo_transfer_shows_its_gains(tmp_path: Path) -> None:
    results = _results(tmp_path)
    section = json.loads((results / "learning-none.json").read_text(encoding="utf-8"))
    block = {"n": 2, "no_feedback": 0.5, "feedback": 0.75, "random": 0.5}
    gains = {"gain": {"mean": 0.25, "ci95": [0.0, 0.5]}, "random_gain": {"mean": 0.0, "ci95": None}}
    section["locomo"] = {
        "data": "tiny.json",
        "k": 10,
        "repeats": 1,
        "recall@10": {"overall(1-4)": {**block, **gains}},
        "feedback_newcomers": {"learned": {"evidence": 1, "other": 3}},
    }
    (results / "learning-transfer.json").write_text(json.dumps(section), encoding="utf-8")
    render_docs.render(results, tmp_path)
    page = (tmp_path / "index.md").read_text(encoding="utf-8")
    mine = page[page.index("### `learning-transfer.json`") :]
    assert "LoCoMo transfer (tiny.json)" in mine
    assert "| overall(1-4) | 2 | 0.500 | 0.750 | +0.250 [+0.000, +0.500] | 0.500 | +0.000 |" in mine
    assert "learned 1 of 4" in mine


def test_a_report_written_into_the_checkout_does_not_mark_the_next_as_uncommitted(
    tmp_path: Path,
) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    code, report = tmp_path / "bench.py", tmp_path / "docs" / "benchmarks" / "results" / "a.json"
    report.parent.mkdir(parents=True)
    code.write_text("x = 1\n", encoding="utf-8")
    report.write_text("{}\n", encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    head = git("rev-parse", "HEAD")
    report.write_text('{"written": true}\n', encoding="utf-8")  # a bench's own output
    assert cli._commit(report.parent) == head
    code.write_text("x = 2\n", encoding="utf-8")  # the code a bench runs
    assert cli._commit(report.parent) == f"{head}-dirty"
    assert cli._commit(tmp_path.parent / "elsewhere") is None
