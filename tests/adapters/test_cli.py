"""The command line, called through `main` and as a real subprocess."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assocmem import surface
from assocmem.adapters import cli
from assocmem.adapters.cli import formatters, guide
from assocmem.adapters.cli.operations import DEST, call_arguments
from assocmem.lifecycle.retention import EXAMPLE_POLICY


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
    assert result["expanded_concepts"] == {"retry": 2.0}
    backoff = next(i for i in result["items"] if i["source"] == "hebbian_retrieval")
    assert backoff["record"]["text"] == "Backoff fixed it."
    assert backoff["via"][0]["concept"] == "retry"
    code, out, _ = run(
        capsys, db_path, "feedback", backoff["record"]["id"], "--outcome", "1", "-c", "timeout"
    )
    assert code == 0 and "links moved" in out
    code, out, _ = run(capsys, db_path, "graph", "timeout")
    assert "timeout — retry  weight 3" in out
    code, out, _ = run(capsys, db_path, "--json", "stats")
    assert json.loads(out)["memories"] == 3
    code, out, _ = run(capsys, db_path, "get", backoff["record"]["id"])
    assert "Backoff fixed it." in out
    code, out, _ = run(capsys, db_path, "export")
    assert [json.loads(line)["text"] for line in out.splitlines()][-1] == "Backoff fixed it."
    code, out, _ = run(capsys, db_path, "read", "why did it time out")
    assert code == 0 and out.startswith("read ") and " asked: " in out.splitlines()[0]


def test_a_later_call_rates_through_the_handle_an_earlier_read_printed(
    capsys: pytest.CaptureFixture[str], db_path: str
) -> None:
    code, out, _ = run(capsys, db_path, "write", "Backoff fixed the flaky deploy.")
    fix = out.strip()
    code, out, _ = run(capsys, db_path, "read", "why does the gateway time out")
    handle = out.split()[1]  # each call its own process's Memory: the handle outlives it
    code, out, _ = run(capsys, db_path, "feedback", fix, "--outcome", "1", "--read", handle)
    assert code == 0 and "lessons taught" in out
    code, out, _ = run(capsys, db_path, "--json", "read", "why does the gateway time out")
    assert json.loads(out)["items"][0]["source"] == "learned"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["write", "   "], 2, "text must not be empty"),
        (["write", "x", "--meta", "{bad"], 2, "--meta must be JSON"),
        (["feedback", "nope", "--outcome", "1", "--read", "01NOREAD"], 3, "no memory 'nope'"),
        (["feedback", "nope", "--outcome", "2"], 2, "outcome must be in [-1, 1]"),
        (["read", "-c", "x", "--hops", "9"], 2, "hops must be an integer"),
        (["read", "x", "--where", "{bad"], 2, "--where must be JSON"),
        (["declare", "[1"], 2, "associations must be JSON"),
        (["read", "x", "--mode", "guess"], 2, "mode"),
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
    assert code == 0 and len(json.loads(out)["relations"]) == 1  # ids are random (i17)
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
    code, out, _ = run(capsys, db_path, "--json", "retain", "--policy", json.dumps(EXAMPLE_POLICY))
    assert {r["name"] for r in json.loads(out)} == {"new fact", "failed call", "repeated workflow"}
    code, out, err = run(capsys, db_path, "history", "app", "region")
    assert (code, out, err) == (1, "no values\n", "nothing found (history)\n")
    code, out, _ = run(capsys, db_path, "contradictions")
    assert out.strip() == "none"
    code, out, _ = run(capsys, db_path, "end-task", "t1")
    assert "cleared 0" in out
    code, out, _ = run(capsys, db_path, "forget", "--where", '{"protected": false}')
    assert "forgot 1" in out
    code, _, err = run(capsys, db_path, "resolve", "nobody", "uses")
    assert code == 3


# -- parity with the registry ---------------------------------------------------


def commands() -> dict[str, argparse.ArgumentParser]:
    subcommands = cli.build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    return dict(subcommands.choices)


COMMANDS = commands()


@pytest.mark.parametrize("method", surface.public_methods())
def test_every_memory_method_has_a_command_taking_every_parameter(method: str) -> None:
    command = COMMANDS.get(method.replace("_", "-"))
    assert command is not None, f"Memory.{method} has no CLI command"
    arguments = {action.dest for action in command._actions}
    operation = surface.operations()[method]
    missing = [p.name for p in operation.parameters if DEST + p.name not in arguments]
    assert not missing, f"`assocmem {operation.command}` lacks {missing}"
    assert command.description == guide.plain(operation.doc)


@pytest.mark.parametrize(
    ("argv", "call"),
    [
        (["read", "q"], {"query": "q"}),
        (["read", "-c", "a", "--concept", "b", "-k", "3", "--no-explain"],
         {"concepts": ["a", "b"], "k": 3, "explain": False}),
        (["read", "q", "--kinds", "semantic", "--kind", "procedural", "--mode", "evidence"],
         {"query": "q", "kinds": ["semantic", "procedural"], "mode": "evidence"}),
        (["write", "t", "--key", "app", "region", "--meta", '{"a": 1}', "--protected"],
         {"text": "t", "key": ["app", "region"], "meta": {"a": 1}, "protected": True}),
        (["forget", "--where", '{"kind": "working"}'], {"where": {"kind": "working"}}),
        (["protect", "m1", "--unprotect"], {"ids": ["m1"], "protected": False}),
        (["retract", "--relation", "4", "--relation-ids", "5", "--mention", "E", "mem:x"],
         {"relation_ids": [4, 5], "mentions": [("E", "mem:x")]}),
        (["resolve", "demo", "uses", "version"],
         {"entity": "demo", "predicates": ["uses", "version"]}),
        (["retain", "--policy", '{"rules": []}'], {"policy": {"rules": []}}),
    ],
)  # fmt: skip
def test_arguments_left_out_are_left_to_memory(argv: list[str], call: dict[str, Any]) -> None:
    args = cli.build_parser().parse_args(argv)
    assert call_arguments(surface.operations()[argv[0]], args) == call


def test_bench_without_its_package_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], db_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "entry_points", lambda group: [])  # assocmem-bench not installed
    code, _, err = run(capsys, db_path, "bench", "core", "--sizes", "300")
    assert code == 7 and err == f"error: {cli.BENCH_MISSING}\n"
    assert "pip install -e ./bench" in cli.BENCH_MISSING


def test_retain_needs_a_policy(capsys: pytest.CaptureFixture[str], db_path: str) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--db", db_path, "retain"])
    assert exited.value.code == 2 and "--policy" in capsys.readouterr().err


def test_results_without_a_formatter_print_readably() -> None:
    assert "soft_read" not in formatters.FORMATTERS
    assert formatters.readable({"weights": [["m1", 1.0]], "temperature": 1.0}) == (
        'weights: [["m1", 1.0]]\ntemperature: 1.0'
    )
    assert formatters.readable([]) == "none"


# -- end to end: real processes on a real SQLite file ----------------------------


def assocmem(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m assocmem ARGS`` with no ASSOCMEM_* settings but ``env``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ASSOCMEM_")}
    return subprocess.run(
        [sys.executable, "-m", "assocmem", *args], capture_output=True, text=True, timeout=120,
        env={**environ, **(env or {})},
    )  # fmt: skip


def ok(*args: str, env: dict[str, str] | None = None) -> Any:
    done = assocmem("--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout if "export" in args else json.loads(done.stdout)


def test_a_plugin_seen_through_two_installs_registers_once(tmp_path: Path) -> None:
    # An old build's metadata left beside the installed package (a stale egg-info on
    # the path) names the same bench plugin again: the command line still starts.
    stale = tmp_path / "assocmem_old-0.1.0.dist-info"
    stale.mkdir()
    (stale / "METADATA").write_text("Metadata-Version: 2.1\nName: assocmem-old\nVersion: 0.1.0\n")
    (stale / "entry_points.txt").write_text("[assocmem.cli]\nbench = assocmem_bench.cli:register\n")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    done = assocmem("bench", "--help", env={"PYTHONPATH": path})
    assert done.returncode == 0, done.stderr
    assert "statements" in done.stdout  # the plugin's own commands, listed once


def test_write_and_read_take_every_field_end_to_end(tmp_path: Path) -> None:
    db = str(tmp_path / "e2e.db")
    fact = ok("--db", db, "write", "Deploys go through the blue cluster.", "--kind", "semantic",
              "--tag", "ops", "--tag", "deploy", "--meta", '{"team": "infra"}',
              "--key", "deploy", "cluster", "--author", "kirari",
              "--source", "https://wiki.example.com/deploy", "--verified-at",
              "2024-01-01T00:00:00Z", "--verification-scope", "read the runbook")  # fmt: skip
    event = ok("--db", db, "write", "The deploy was slow on Tuesday.", "--tag", "ops")
    (record,) = ok("--db", db, "get", fact["id"])
    assert (record["kind"], record["tags"], record["meta"], record["key"], record["author"]) == (
        "semantic",
        ["ops", "deploy"],
        {"team": "infra"},
        ["deploy", "cluster"],
        "kirari",
    )
    assert record["verification_scope"] == "read the runbook"

    def read_ids(*flags: str) -> list[str]:
        done = assocmem("--json", "--db", db, "read", "deploy", *flags)
        items = json.loads(done.stdout)["items"]
        assert done.returncode == (0 if items else 1), done.stderr  # 1: nothing found
        return [i["record"]["id"] for i in items]

    assert set(read_ids()) == {fact["id"], event["id"]}
    assert read_ids("--where", '{"kind": "semantic"}') == [fact["id"]]
    assert read_ids("--kinds", "episodic") == [event["id"]]
    assert read_ids("--mode", "evidence") == [fact["id"]]
    assert read_ids("--where", '{"team": "infra"}', "--kinds", "episodic") == []
    assert [r["id"] for r in ok("--db", db, "history", "deploy", "cluster")] == [fact["id"]]


def test_json_round_trips_through_export_and_write_many(tmp_path: Path) -> None:
    first, second = str(tmp_path / "first.db"), str(tmp_path / "second.db")
    ok("--db", first, "write", "Backoff fixed it.", "--tag", "fix", "--meta", '{"n": 2}')
    ok("--db", first, "write", "Retried, fine.", "-c", "retry")
    exported = [json.loads(line) for line in ok("--db", first, "export").splitlines()]
    fields = ("text", "kind", "tags", "meta", "concepts", "observed_at")
    items = [{f: r[f] for f in fields} for r in exported]
    written = ok("--db", second, "write-many", json.dumps(items))
    assert [w["stored"] for w in written] == [True, True]
    again = [json.loads(line) for line in ok("--db", second, "export").splitlines()]
    assert [{f: r[f] for f in fields} for r in again] == items


def test_keys_take_their_file_before_or_after_the_action(tmp_path: Path) -> None:
    keys = str(tmp_path / "keys.json")
    first = ok("keys", "add", "--keys", keys, "--key-agent", "ops")
    second = ok("keys", "--keys", keys, "add")
    third = ok("keys", "add", env={"ASSOCMEM_KEYS": keys, "ASSOCMEM_AGENT": "env-agent"})
    assert third["agent_id"] == "env-agent"
    assert ok("keys", "revoke", "--keys", keys, first["id"]) == {"revoked": first["id"]}
    assert ok("keys", "--keys", keys, "revoke", second["id"]) == {"revoked": second["id"]}
    listed = ok("keys", "list", env={"ASSOCMEM_KEYS": keys})
    assert [bool(e["revoked_at"]) for e in listed] == [True, True, False]
    again = assocmem("keys", "revoke", first["id"], "--keys", keys)
    assert again.returncode == 3 and "no active key" in again.stderr
    missing = assocmem("keys", "list")
    assert missing.returncode == 2 and "--keys" in missing.stderr


@pytest.mark.parametrize(
    ("args", "env", "field"),
    [
        (["--embedder", "openai"], {}, "embedder_url"),
        ([], {"ASSOCMEM_EMBEDDER": "openai", "ASSOCMEM_EMBEDDER_URL": "https://e.example/v1"},
         "embedder_model"),
        (["--embedder", "openai", "--embedder-url", "https://e.example/v1", "--embedder-model",
          "m", "--embedder-dims", "8", "--embedder-key-env", "NO_SUCH_KEY_VARIABLE"], {},
         "embedder_key_env"),
    ],
)  # fmt: skip
def test_an_incomplete_http_embedder_is_one_line_naming_the_field(
    tmp_path: Path, args: list[str], env: dict[str, str], field: str
) -> None:
    done = assocmem("--db", str(tmp_path / "x.db"), *args, "read", "anything", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and field in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_settings_come_from_the_flag_then_the_environment_then_the_default(
    tmp_path: Path,
) -> None:
    home = {"ASSOCMEM_HOME": str(tmp_path / "home")}
    by_default = ok("write", "kept in the data dir", env=home)
    assert (tmp_path / "home" / "memory.db").is_file()
    env = {**home, "ASSOCMEM_DB": str(tmp_path / "env.db"), "ASSOCMEM_AGENT": "env-agent"}
    from_env = ok("write", "kept where the environment says", env=env)
    assert (tmp_path / "env.db").is_file()
    flagged = ok("--db", str(tmp_path / "flag.db"), "--agent", "flag-agent", "write", "flagged",
                 env=env)  # fmt: skip
    assert (tmp_path / "flag.db").is_file()
    (record,) = ok("--db", str(tmp_path / "flag.db"), "--agent", "flag-agent", "get",
                   flagged["id"])  # fmt: skip
    assert record["agent_id"] == "flag-agent"
    (record,) = ok("get", from_env["id"], env=env)
    assert record["agent_id"] == "env-agent"
    (record,) = ok("get", by_default["id"], env=home)
    assert record["agent_id"] == "default"


def test_export_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    from assocmem import Memory

    db = str(tmp_path / "many.db")
    with Memory(db) as memory:  # far more than a pipe holds, so export meets the closed pipe
        memory.write_many([{"text": f"note {n} about the gateway " * 8} for n in range(2000)])
    pipeline = f"{sys.executable} -m assocmem --db {db} export | head -n 1"
    done = subprocess.run(
        pipeline + '; echo "status=${PIPESTATUS[0]}"',
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    first, status = done.stdout.splitlines()
    assert json.loads(first)["text"].startswith("note 0 ")
    assert done.stderr == ""
    assert status == f"status={cli.BROKEN_PIPE}"


# -- a command line that guides --------------------------------------------------


def every_command_parser() -> list[argparse.ArgumentParser]:
    return list(guide.every_parser(cli.build_parser()))


def test_help_lists_every_command_once_grouped_each_group_one_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    parser = cli.build_parser()
    groups = guide.sections(parser)
    listed = [line.split()[0] for rows in groups.values() for line in rows[1:]]
    assert sorted(listed) == sorted(COMMANDS) and len(listed) == len(set(listed))
    assert "other" not in groups  # every command of the project has its place
    text = parser.format_help()
    for key, rows in groups.items():
        assert len(rows) <= 24, f"group {key} is {len(rows)} lines"
        assert "\n".join(rows) in text
        for row in rows[1:]:
            assert len(row) <= 80 and "`" not in row and ":meth:" not in row, row
    assert "exit codes:" in text and "141" in text


def test_help_prints_one_group_or_one_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["help", "trust"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("trust: ") and "  credit " in out and "  write " not in out
    assert cli.main(["help", "read"]) == 0
    assert "--hops" in capsys.readouterr().out
    assert cli.main(["help", "nothing-like-it"]) == 2
    assert "groups: start, core" in capsys.readouterr().err


def test_markup_is_stripped_from_summaries() -> None:
    assert guide.plain("See :meth:`~assocmem.Memory.read` and ``where`` or `k`.") == (
        "See read and where or k."
    )


def test_every_option_of_every_command_has_help_and_shows_its_default() -> None:
    lacking, hidden = [], []
    for parser in every_command_parser():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            text = formatter._get_help_string(action) % {**vars(action), "prog": parser.prog}
            name = f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
            if not (action.help or "").strip():
                lacking.append(name)
            elif action.option_strings and action.default not in (
                None, False, argparse.SUPPRESS, []
            ) and "default" not in text:  # fmt: skip
                hidden.append(name)
    assert not lacking, f"options without help: {lacking}"
    assert not hidden, f"options whose help hides the default: {hidden}"


def test_no_parser_takes_an_abbreviated_flag(
    capsys: pytest.CaptureFixture[str], db_path: str
) -> None:
    assert all(not parser.allow_abbrev for parser in every_command_parser())
    with pytest.raises(SystemExit) as exited:
        cli.main(["--db", db_path, "read", "x", "--kin", "semantic"])
    assert exited.value.code == 2 and "unrecognized arguments: --kin" in capsys.readouterr().err
    code, _, err = run(capsys, db_path, "read", "deploy", "--k", "0")
    assert code == 2 and err == "error: k must be an integer from 1 to 1000\n"


@pytest.mark.parametrize("word", ["postgres", "postgresql", "sqlite", "PostgreSQL"])
def test_db_is_a_place_never_a_backend_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--db", word, "stats"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --db is where the store is") and "postgresql://" in err
    assert list(tmp_path.iterdir()) == []  # no file named after the backend
    assert cli.main(["--db", f"./{word}", "stats"]) == 0  # a file by that name, said so
    assert (tmp_path / word).is_file()


def test_nothing_found_exits_1_with_a_message_and_json_still_printed(
    capsys: pytest.CaptureFixture[str], db_path: str
) -> None:
    run(capsys, db_path, "write", "Backoff fixed the flaky deploy.")
    code, out, err = run(capsys, db_path, "read", "deploy")
    assert code == 0 and "Backoff" in out
    code, out, err = run(capsys, db_path, "read", "zebra xylophone")
    assert (code, err) == (1, "nothing found (read)\n")
    assert out.startswith("read ") and len(out.splitlines()) == 1  # the handle, to rate with
    code, out, err = run(capsys, db_path, "reconstruct", "zebra xylophone")
    assert (code, out, err) == (1, "", "nothing found (reconstruct)\n")
    for command in ("read", "reconstruct"):
        code, out, err = run(capsys, db_path, command, "zebra xylophone", "--json")
        assert code == 1 and json.loads(out)["items"] == [] and "nothing found" in err
    code, out, err = run(capsys, db_path, "get", "01NOSUCHMEMORY")
    assert code == 3 and out == "" and "no memory" in err


def test_json_verbosity_and_log_level_go_before_or_after_the_command(
    capsys: pytest.CaptureFixture[str], db_path: str
) -> None:
    code, out, err = run(capsys, db_path, "stats")
    assert code == 0 and err == "" and not out.startswith("{")
    for argv in (["--json", "-v", "stats"], ["stats", "--json", "-v"]):
        code, out, err = run(capsys, db_path, *argv)
        assert json.loads(out)["memories"] == 0
        assert "INFO assocmem.store: opening store" in err
    code, out, err = run(capsys, db_path, "-vv", "--log-level", "error", "stats")
    assert code == 0 and err == ""


def test_keys_add_prints_only_the_key_on_stdout(tmp_path: Path) -> None:
    done = assocmem("keys", "add", "--keys", str(tmp_path / "keys.json"))
    assert done.returncode == 0
    (key,) = done.stdout.splitlines()
    assert " " not in key and "shown only now" in done.stderr
    listed = ok("keys", "list", "--keys", str(tmp_path / "keys.json"))
    assert listed[0]["id"] in done.stderr


def test_a_mistyped_command_gets_a_suggestion_not_every_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["wrte", "x"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "did you mean write?" in err and "consolidate" not in err
    with pytest.raises(SystemExit):
        cli.main(["--log-level", "chatty", "stats"])  # a short list is still shown whole
    assert "'debug', 'info'" in capsys.readouterr().err
