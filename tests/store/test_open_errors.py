"""Opening a store: each wrong target says what is wrong, and a read-only file is read."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from assocmem import InvalidInput, Memory, StoreUnavailable
from assocmem.capabilities import open_store
from assocmem.pool import MemoryPool

SRC = Path(__file__).resolve().parents[2] / "src"


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "deeper"
    with pytest.raises(StoreUnavailable, match="folder .*nowhere/deeper.* does not exist"):
        Memory(str(missing / "x.db"))


def test_a_directory_is_named_as_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="is a directory"):
        Memory(str(tmp_path))


def test_a_path_inside_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(StoreUnavailable, match="which is a file"):
        Memory(str(tmp_path / "plain" / "x.db"))


def test_a_tilde_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with Memory("~/x.db") as memory:
        memory.write("kept in the home folder")
    assert (tmp_path / "x.db").is_file()


@pytest.mark.parametrize("url", ["mysql://user@host/db", "sqlite://x.db", "redis://h"])
def test_an_unknown_url_scheme_lists_the_supported_ones(url: str) -> None:
    with pytest.raises(InvalidInput, match="unsupported store URL scheme") as raised:
        Memory(url)
    assert ":memory:" in raised.value.message and "postgresql://" in raised.value.message
    assert raised.value.field == "target"


def _filled(path: Path) -> str:
    with Memory(str(path)) as memory:
        # Old enough that reading it restarts its decay clock: a read that writes.
        memory.write("the gateway timed out", observed_at=datetime.now(UTC) - timedelta(days=2))
    return str(path)


def test_an_explicitly_read_only_store_reads_and_refuses_writes(tmp_path: Path) -> None:
    path = _filled(tmp_path / "ro.db")
    before = Path(path).read_bytes()
    store = open_store(path, read_only=True)
    memory = Memory.attached(store, MemoryPool.scope("default"), None)
    try:
        assert [i.text for i in memory.read("gateway").items] == ["the gateway timed out"]
        assert memory.stats().memories == 1 and len(list(memory.export())) == 1
        with pytest.raises(StoreUnavailable, match=r"ro\.db.*read-only"):
            memory.write("another")
    finally:
        store.close()
    assert Path(path).read_bytes() == before


@pytest.fixture
def unwritable_folder() -> Iterator[Path]:
    """A folder another user can enter (pytest's tmp folders are private to us)."""
    folder = Path(tempfile.mkdtemp(prefix="assocmem-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


READER = """
import os, sys
from assocmem import Memory, StoreUnavailable
if len(sys.argv) > 2:  # drop root once everything is imported (its home is private)
    with Memory(":memory:") as warm:
        warm.write("gateway"); warm.read("gateway")
    os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))
with Memory(sys.argv[1]) as memory:
    print([item.text for item in memory.read("gateway").items])
    try:
        memory.write("another")
    except StoreUnavailable as exc:
        print("refused:", exc.message)
"""


def test_a_file_this_process_cannot_write_is_opened_read_only(unwritable_folder: Path) -> None:
    path = _filled(unwritable_folder / "shipped.db")
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    unwritable_folder.chmod(0o555)  # no WAL side files can be made either
    # Root writes whatever it likes, so as root the reader drops to an unprivileged user.
    as_user = ["65534"] if os.geteuid() == 0 else []
    done = subprocess.run(
        [sys.executable, "-c", READER, path, *as_user],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['the gateway timed out']"
    assert lines[1].startswith("refused:") and "shipped.db" in lines[1] and "read-only" in lines[1]
