"""Export and import of a whole store: the restart control holds across the move."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assocmem import InvalidInput, Memory, Scope
from assocmem.adapters.cli import main as cli
from assocmem.demo import AGENT, QUESTION, learn, summary


def _via(memory: Memory) -> dict[str, Any]:
    return summary(memory.read(concepts=QUESTION))


def test_the_restart_control_holds_across_export_all_and_import(
    store_target: Callable[..., str],
) -> None:
    source, target = store_target("a"), store_target("b")
    learn(source)  # writes, reads, two helpful answers: learned links and lessons
    with Memory(source, agent_id=AGENT) as a:
        a.declare({"entities": [{"name": "Deploy pipeline", "aliases": ["pipeline"]}],
                   "relations": [{"subject": "Deploy pipeline", "predicate": "uses",
                                  "object": "retry"}]})  # fmt: skip
        lines = list(a.export_all())
        expected = _via(a)
        assert any(v for item in expected["items"] for v in item["via"])
    with Memory(target, agent_id=AGENT) as b:
        report = b.import_lines(lines)
        assert report.errors == ()
        assert report.imported["record"] == 6 and report.imported["feedback"] == 2
        assert _via(b) == expected
        assert [e.name for e in b.traverse("pipeline").entities] == ["Deploy pipeline", "retry"]
        # Twice is once: records and the log are skipped, learned state set again.
        again = b.import_lines(lines)
        assert again.skipped == {"feedback": 2, "record": 6}
        assert _via(b) == expected
        assert b.stats().feedback == 2


def test_plain_export_lines_import_with_ids_times_and_status(mem: Memory, tmp_path: Path) -> None:
    written = mem.write_many([
        {"text": "Paris is the capital.", "key": ["France", "capital"], "kind": "semantic",
         "observed_at": "2020-01-01T00:00:00Z", "tags": ["geo"], "meta": {"n": 1}},
        {"text": "Lyon is the capital.", "key": ["France", "capital"], "kind": "semantic",
         "observed_at": "2021-01-01T00:00:00Z", "thread": "s1"},
    ])  # fmt: skip
    mem.archive([written[1].id or ""])
    lines = list(mem.export_all())
    with Memory(str(tmp_path / "copy.db"), agent_id="ops") as copy:
        assert copy.import_lines(lines).imported["record"] == 2
        old, new = copy.history(["France", "capital"])
        assert (old.id, new.id) == (written[0].id, written[1].id)
        assert (old.status, new.status) == ("superseded", "archived")
        assert old.tags == ("geo",) and old.meta == {"n": 1} and new.thread == "s1"
        assert old.created_at == mem.history(["France", "capital"])[0].created_at


def test_a_bad_line_is_reported_and_the_rest_imported(mem: Memory) -> None:
    lines: list[Any] = [
        {"text": "Retried the request and it went through."},
        {"text": "", "id": "X1"},
        "not an object",
        {"text": "Cache warmed.", "agent_id": "someone-else"},
        {"line": "link", "a": "timeout", "b": "deploy", "weight": "heavy", "count": 1,
         "updated_at": "2024-01-01T00:00:00Z"},
        {"line": "header", "format": "assocmem-export", "version": 99},
    ]  # fmt: skip
    report = mem.import_lines(lines, first_line=10)
    assert report.imported == {"record": 1}
    assert [(p.line, p.field) for p in report.errors] == [
        (11, "text"), (12, "line"), (13, "agent_id"), (14, "weight"), (15, "version"),
    ]  # fmt: skip
    with pytest.raises(InvalidInput) as caught:
        mem.import_lines({"text": "x"})  # type: ignore[arg-type]
    assert caught.value.field == "lines"


def test_an_import_writes_only_the_importers_scope(mem: Memory) -> None:
    mem.write("Backoff of two seconds fixed the flaky call.", concepts=["retry", "backoff"])
    lines = list(mem.export_all())
    other = Memory.attached(mem._store, Scope("intruder"))
    report = other.import_lines(lines)
    assert report.imported.get("record", 0) == 0
    assert {p.field for p in report.errors} == {"agent_id"}
    rehomed = Memory.attached(mem._store, Scope("newcomer"))
    rehomed.import_lines([{k: v for k, v in line.items() if k != "id"} for line in lines],
                         rehome=True)  # fmt: skip
    assert [r.agent_id for r in rehomed.export()] == ["newcomer"]
    # The owner's view is unchanged.
    assert [r.agent_id for r in mem.export()] == ["ops"]
    assert mem.stats().memories == 1


def test_the_cli_moves_a_store_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, target, dump = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "all.jsonl"
    learn(str(source))
    assert cli(["--db", str(source), "--agent", AGENT, "export", "--all"]) == 0
    dump.write_text(capsys.readouterr().out, encoding="utf-8")
    assert json.loads(dump.read_text().splitlines()[0])["line"] == "header"
    assert cli(["--db", str(target), "--agent", AGENT, "--json", "import", "--all", str(dump)]) == 0
    assert json.loads(capsys.readouterr().out)["imported"]["link"] > 0
    with Memory(str(source), agent_id=AGENT) as a, Memory(str(target), agent_id=AGENT) as b:
        assert _via(a) == _via(b)
    # A plain export has no header: --all refuses it (exit 2), a plain import takes it.
    assert cli(["--db", str(source), "--agent", AGENT, "export"]) == 0
    plain = tmp_path / "plain.jsonl"
    plain.write_text(capsys.readouterr().out + "not json\n", encoding="utf-8")
    assert cli(["--db", str(tmp_path / "c.db"), "--agent", AGENT, "import", "--all",
                str(plain)]) == 2  # fmt: skip
    assert cli(["--db", str(tmp_path / "c.db"), "--agent", AGENT, "import", str(plain)]) == 1
    assert "line 7: -: not JSON" in capsys.readouterr().out


def test_export_output_is_unchanged_by_the_all_flag_existing(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Memory(db, agent_id="ops") as memory:
        memory.write("Jitter on the backoff spread the calls out.")
        expected = "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n"
                           for r in memory.export())  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "assocmem", "--db", db, "--agent", "ops",
                          "export"], capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out == expected
