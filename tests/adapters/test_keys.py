"""The key file under concurrent changes: every `keys add` of every process is kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assocmem.adapters.server.keys import add_key, read_keys, revoke_key

ADDER = """
import sys, time
from assocmem.adapters.server.keys import add_key
while time.time() < float(sys.argv[2]):  # start together, so the changes overlap
    pass
for i in range(int(sys.argv[3])):
    add_key(sys.argv[1], f"agent-{sys.argv[4]}-{i}")
"""


def test_concurrent_keys_add_processes_lose_no_key(tmp_path: Path) -> None:
    import time

    keys = tmp_path / "keys.json"
    start = str(time.time() + 2.0)
    adders = [
        subprocess.Popen([sys.executable, "-c", ADDER, str(keys), start, "25", str(n)])
        for n in range(6)
    ]
    commands = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "assocmem",
                "keys",
                "add",
                "--keys",
                str(keys),
                "--key-agent",
                f"cli-{n}",
            ],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in adders + commands] == [0] * 10
    agents = {entry.agent_id for entry in read_keys(keys)}
    expected = {f"agent-{n}-{i}" for n in range(6) for i in range(25)}
    assert agents == expected | {f"cli-{n}" for n in range(4)}
    assert len(read_keys(keys)) == 154
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".keys-")]


def test_a_key_file_is_whole_json_after_each_change(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    entry, _ = add_key(keys, "ops")
    assert json.loads(keys.read_text())[0]["id"] == entry.id
    assert revoke_key(keys, entry.id) and not revoke_key(keys, entry.id)
    assert read_keys(keys)[0].revoked_at is not None
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
