"""The command line, called through `main` and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assocmem.adapters import cli


def run(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--db", db, "--agent", "ops", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_write_read_feedback_graph_stats(capsys: pytest.CaptureFixture[str], db_path: str) -> None:
    for text, concepts in (("Retried, fine.", ["timeout", "retry"]),
                           ("Timed out again.", ["timeout", "retry"]),
                           ("Backoff fixed it.", ["retry", "backoff"])):  # fmt: skip
        code, out, _ = run(
            capsys, db_path, "write", text, *[a for c in concepts for a in ("-c", c)]
        )
        assert code == 0 and len(out.strip()) == 26
    code, out, _ = run(capsys, db_path, "--json", "read", "-c", "timeout")
    result = json.loads(out)
    assert result["expanded_concepts"] == {"retri": 2.0}
    backoff = next(i for i in result["items"] if i["source"] == "hebbian_retrieval")
    assert backoff["record"]["text"] == "Backoff fixed it."
    assert backoff["via"][0]["concept"] == "retri"
    code, out, _ = run(
        capsys, db_path, "feedback", backoff["record"]["id"], "--outcome", "1", "-c", "timeout"
    )
    assert code == 0 and "links moved" in out
    code, out, _ = run(capsys, db_path, "graph", "timeout")
    assert "timeout — retri  weight 3" in out
    code, out, _ = run(capsys, db_path, "--json", "stats")
    assert json.loads(out)["memories"] == 3
    code, out, _ = run(capsys, db_path, "get", backoff["record"]["id"])
    assert "Backoff fixed it." in out
    code, out, _ = run(capsys, db_path, "export")
    assert [json.loads(line)["text"] for line in out.splitlines()][-1] == "Backoff fixed it."
    code, out, _ = run(capsys, db_path, "read", "why did it time out")
    assert code == 0 and out.startswith("asked:")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["write", "   "], 2, "text must not be empty"),
        (["write", "x", "--meta", "{bad"], 2, "--meta must be JSON"),
        (["feedback", "nope", "--outcome", "1"], 3, "no memory 'nope'"),
        (["feedback", "nope", "--outcome", "2"], 2, "outcome must be in [-1, 1]"),
        (["read", "-c", "x", "--hops", "9"], 2, "hops must be an integer"),
    ],
)
def test_errors_print_one_line_and_exit_by_class(
    capsys: pytest.CaptureFixture[str], db_path: str, args: list[str], code: int, message: str
) -> None:
    got, _, err = run(capsys, db_path, *args)
    assert got == code
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_every_command_has_help() -> None:
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"write", "read", "feedback", "graph", "get", "export", "stats", "demo", "bench"} <= set(
        commands
    )
    for name, sub in commands.items():
        assert sub.description, name


def test_db_defaults_to_env_then_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ASSOCMEM_DB", str(tmp_path / "env.db"))
    assert cli.default_db() == str(tmp_path / "env.db")
    monkeypatch.delenv("ASSOCMEM_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert cli.default_db() == str(tmp_path / "data" / "assocmem" / "memory.db")


def test_demo_runs_as_a_real_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", "demo"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "2: new process, links loaded" in done.stdout
    assert "Only the saved weights hold" in done.stdout and "backoff(2)" in done.stdout


def test_graph_commands(capsys: pytest.CaptureFixture[str], db_path: str) -> None:
    code, out, _ = run(capsys, db_path, "write", "Kirari keeps MizEye running")
    memory_id = out.strip()
    associations = json.dumps({"entities": ["MizEye"], "relations": [
        {"subject": "Kirari", "predicate": "maintains", "object": "MizEye"}]})  # fmt: skip
    code, out, _ = run(
        capsys, db_path, "--json", "declare", associations, "--anchor", f"mem:{memory_id}"
    )
    assert code == 0 and json.loads(out)["relations"] == [1]
    code, out, _ = run(capsys, db_path, "--json", "traverse", "mizeye")
    assert [e["name"] for e in json.loads(out)["entities"]] == ["MizEye", "Kirari"]
    code, out, _ = run(capsys, db_path, "reconstruct", "who maintains MizEye")
    assert memory_id in out
    code, out, _ = run(capsys, db_path, "retract", "--mention", "MizEye", f"mem:{memory_id}")
    assert "1 mentions" in out
    code, out, _ = run(capsys, db_path, "delete-entity", "Kirari")
    assert "deleted 1" in out
    code, out, _ = run(capsys, db_path, "forget", memory_id)
    assert "forgot 1" in out
    code, _, err = run(capsys, db_path, "traverse", "Kirari")
    assert code == 3 and "no entity" in err
    code, _, err = run(capsys, db_path, "declare", "{not json")
    assert code == 2


def test_lifecycle_commands(capsys: pytest.CaptureFixture[str], db_path: str) -> None:
    ids = []
    for when in ("2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"):
        code, out, _ = run(capsys, db_path, "write", f"region as of {when}", "--observed-at", when)
        ids.append(out.strip())
    code, out, _ = run(capsys, db_path, "archive", "--where", '{"kind": "episodic"}')
    assert "archived 2" in out
    code, out, _ = run(capsys, db_path, "restore", *ids)
    assert "restored 2" in out
    code, out, _ = run(capsys, db_path, "protect", ids[0])
    assert "protected 1" in out
    code, out, _ = run(capsys, db_path, "--json", "retain")
    assert {r["name"] for r in json.loads(out)} == {"new fact", "failed call", "repeated workflow"}
    code, out, _ = run(capsys, db_path, "history", "app", "region")
    assert out.strip() == "no values"
    code, out, _ = run(capsys, db_path, "contradictions")
    assert out.strip() == "none"
    code, out, _ = run(capsys, db_path, "end-task", "t1")
    assert "cleared 0" in out
    code, out, _ = run(capsys, db_path, "forget", "--where", '{"protected": false}')
    assert "forgot 1" in out
    code, _, err = run(capsys, db_path, "resolve", "nobody", "uses")
    assert code == 3
