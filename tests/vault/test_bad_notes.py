"""One bad note never breaks or tricks a vault index: a note swapped for a link, replaced,
deleted, binary or unfit for a memory is skipped with its reason and every other note is
indexed; a note too long for one memory is split, not lost."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.vault import notes
from assocmem.write.validate import MAX_TEXT_BYTES

pytestmark = pytest.mark.usefixtures("backend")

SECRET = "hunter2 is the root password"
NOTE = "habits/Streaks.md"
# Notes a swapper races for and index runs racing it: enough that a read which follows
# links is caught doing so, in a few seconds of test.
RACE_NOTES = 100
RACE_RUNS = 20


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the vault holding a note of the same name with a secret in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "Streaks.md").write_text(f"# Streaks\n\n{SECRET}.\n")
    return folder


def vault_text(memory: Memory) -> str:
    """Every vault memory's text, joined."""
    rows = memory._store.vault_notes(memory._vault)
    ids = [i for row in rows for i in row.memory_ids]
    return "\n".join(r.text for r in memory._store.records(memory._vault, ids))


def chunk_texts(memory: Memory, path: str) -> list[str]:
    """The texts of one note's memories, in order."""
    row = next(r for r in memory._store.vault_notes(memory._vault) if r.path == path)
    by_id = {r.id: r.text for r in memory._store.records(memory._vault, list(row.memory_ids))}
    return [by_id[i] for i in row.memory_ids]


def after_walk(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> list[str]:
    """Run ``act`` once the walk has listed the vault and before any note is read: the
    window a swap or a delete races for. Returns a list that records that it ran."""
    walk, ran = notes.walk, list[str]()

    def walk_then_act(*args: Any, **kwargs: Any) -> notes.Walk:
        walked = walk(*args, **kwargs)
        act()
        ran.append("acted")
        return walked

    monkeypatch.setattr(notes, "walk", walk_then_act)
    return ran


def swap_note_for_link(vault: Path, outside: Path) -> None:
    (vault / NOTE).unlink()
    (vault / NOTE).symlink_to(outside / "Streaks.md")


def swap_folder_for_link(vault: Path, outside: Path) -> None:
    (vault / "habits").rename(vault.parent / "habits-away")
    (vault / "habits").symlink_to(outside, target_is_directory=True)


def swap_note_for_hard_link(vault: Path, outside: Path) -> None:
    os.link(outside / "Streaks.md", vault / "habits" / ".swap")
    os.replace(vault / "habits" / ".swap", vault / NOTE)


HABITS = ("Environment Design", "Habit Loops", "Habits Index", "Streaks")
SWAPS = {
    "the note for a link out": (swap_note_for_link, {NOTE: notes.BECAME_LINK}),
    # A link where a folder was is no folder to open: the notes under it were replaced.
    "its folder for a link out": (
        swap_folder_for_link,
        {f"habits/{name}.md": notes.REPLACED for name in HABITS},
    ),
    "the note for a hard link to a file outside": (swap_note_for_hard_link, {NOTE: notes.REPLACED}),
}


@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_a_swap_between_walk_and_read_is_skipped_and_nothing_outside_is_indexed(
    memory: Memory,
    vault: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    swap: tuple[Callable[[Path, Path], None], dict[str, str]],
) -> None:
    act, skipped = swap
    ran = after_walk(monkeypatch, lambda: act(vault, outside))
    report = memory.vault_index(str(vault))
    assert ran == ["acted"]
    assert report.skipped == skipped
    assert report.notes == 18 - len(skipped)
    assert SECRET not in vault_text(memory)
    assert "Deliberate Practice" in vault_text(memory)  # the other notes are indexed


# Swaps every note of a folder for a link out of the vault and back, as fast as it can,
# in a process of its own (as an attacker would), each note coming back with a new stat
# so that the next index reads it again.
SWAPPER = """
import os, sys
folder, target = sys.argv[1:]
notes = sorted(os.path.join(folder, n) for n in os.listdir(folder))
kept = [os.path.join(folder, f".kept{i}") for i in range(len(notes))]
link, file = os.path.join(folder, ".link"), os.path.join(folder, ".file")
for note, spare in zip(notes, kept):
    os.link(note, spare)
print("swapping", flush=True)
moves = 0
while True:
    for note in notes:
        os.symlink(target, link)
        os.replace(link, note)
    for note, spare in zip(notes, kept):
        os.link(spare, file)
        moves += 1
        os.utime(file, ns=(moves, moves))
        os.replace(file, note)
"""


def test_notes_swapped_for_links_over_and_over_are_never_followed(
    memory: Memory, vault: Path, outside: Path
) -> None:
    race = vault / "race"
    race.mkdir()
    for i in range(RACE_NOTES):
        (race / f"Note {i}.md").write_text(f"# Note {i}\n\nAn ordinary note.\n")
    target = str(outside / "Streaks.md")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(race), target], stdout=subprocess.PIPE, text=True
    )
    leaks = 0
    try:
        assert swapper.stdout and swapper.stdout.readline() == "swapping\n"
        for _ in range(RACE_RUNS):
            memory.vault_index(str(vault))
            leaks += SECRET in vault_text(memory)
        assert swapper.poll() is None  # it swapped all along
    finally:
        swapper.kill()
        swapper.wait()
    assert leaks == 0


def test_a_note_deleted_while_the_walk_lists_its_folder_is_skipped(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scandir, deleted = os.scandir, list[str]()

    def list_then_delete(*args: Any, **kwargs: Any) -> Iterator[os.DirEntry[str]]:
        entries = list(scandir(*args, **kwargs))
        if any(e.name == "Streaks.md" for e in entries) and not deleted:
            (vault / NOTE).unlink()
            deleted.append(NOTE)
        return iter(entries)

    monkeypatch.setattr(os, "scandir", list_then_delete)
    report = memory.vault_index(str(vault))
    assert deleted == [NOTE]
    assert report.skipped == {NOTE: notes.VANISHED}
    assert (report.notes, report.added) == (17, 17)


def test_a_note_deleted_between_walk_and_read_is_skipped(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = after_walk(monkeypatch, (vault / NOTE).unlink)
    report = memory.vault_index(str(vault))
    assert ran == ["acted"]
    assert report.skipped == {NOTE: notes.VANISHED}
    assert (report.notes, report.added) == (17, 17)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a descriptor")
def test_a_note_moved_out_of_the_vault_as_it_is_opened_is_skipped(
    memory: Memory, vault: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open, moved = os.open, list[str]()

    def move_then_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("Streaks.md") and not moved:
            (vault / "habits").rename(outside / "habits")  # the note goes with its folder
            moved.append(NOTE)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", move_then_open)
    report = memory.vault_index(str(vault))
    assert moved == [NOTE]
    assert report.skipped[NOTE] == notes.MOVED_OUT
    assert "habit into a game" not in vault_text(memory)


@contextmanager
def unblocking(fifo: Path) -> Iterator[None]:
    """Open ``fifo`` for writing whenever a reader waits on it, so a read that opens it
    blocking gets an empty file rather than hanging the test."""
    done = threading.Event()

    def release() -> None:
        while not done.wait(0.02):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader yet, or the path is not a FIFO now

    thread = threading.Thread(target=release)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def test_a_note_swapped_for_a_fifo_is_skipped_without_waiting_on_it(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def swap() -> None:
        (vault / NOTE).unlink()
        os.mkfifo(vault / NOTE)

    after_walk(monkeypatch, swap)
    with unblocking(vault / NOTE):
        report = memory.vault_index(str(vault))
    assert report.skipped == {NOTE: notes.REPLACED}


BAD = {
    "a NUL byte": (b"# Binary\n\nbefore\x00after\n", notes.HAS_NUL),
    "UTF-16 text": ("# Wide\n\nwide text\n".encode("utf-16"), notes.HAS_NUL),
    "a title over the meta limit": (
        b"---\ntitle: " + b"t" * 70_000 + b"\n---\nbody\n",
        "not indexable: meta is larger than 65536 bytes of JSON",
    ),
}


@pytest.mark.parametrize("content", BAD.values(), ids=BAD.keys())
def test_a_note_unfit_for_a_memory_is_skipped_and_the_rest_indexed(
    memory: Memory, vault: Path, content: tuple[bytes, str]
) -> None:
    data, reason = content
    (vault / "learning" / "Bad.md").write_bytes(data)
    report = memory.vault_index(str(vault))
    assert report.skipped == {"learning/Bad.md": reason}
    assert (report.notes, report.added) == (18, 18)
    assert memory.relevant_notes("feedback latency", k=1)


LONG = {
    "one paragraph of many lines": "".join(f"entry {i} of the ledger\n" for i in range(4_000)),
    "one line with no break": "".join(f"entry{i} " for i in range(12_000)),
    "one line of four-byte characters": "\U0001f600" * 20_000 + " ",
}


@pytest.mark.parametrize("body", LONG.values(), ids=LONG.keys())
def test_a_paragraph_over_the_memory_limit_is_split_and_every_word_kept(
    memory: Memory, vault: Path, body: str
) -> None:
    text = f"# Ledger\n\n{body}zanzibar closes the ledger\n"
    assert len(text.encode()) > MAX_TEXT_BYTES
    (vault / "learning" / "Ledger.md").write_text(text)
    report = memory.vault_index(str(vault))
    assert report.skipped == {}
    chunks = chunk_texts(memory, "learning/Ledger.md")
    assert len(chunks) > 1
    assert all(len(c) <= notes.MAX_CHUNK_HARD_CHARS for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())  # no character lost
    assert memory.relevant_notes("zanzibar", k=1)[0].note == "learning/Ledger.md"


def test_a_known_note_that_cannot_be_read_now_is_kept_as_it_was(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.vault_index(str(vault))
    before = chunk_texts(memory, NOTE)

    def replace_note() -> None:  # an editor's atomic save: a new file renamed over it
        (vault / "habits" / ".save").write_text("# Streaks\n\nRewritten.\n")
        os.replace(vault / "habits" / ".save", vault / NOTE)

    after_walk(monkeypatch, replace_note)
    os.utime(vault / NOTE, ns=(1, 1))  # the walk sees a new stat, so it reads the note
    report = memory.vault_index()
    assert report.skipped == {NOTE: notes.REPLACED}
    assert (report.notes, report.removed, report.changed) == (18, 0, 0)
    assert chunk_texts(memory, NOTE) == before
    monkeypatch.undo()
    again = memory.vault_index()
    assert (again.skipped, again.changed) == ({}, 1)
    assert chunk_texts(memory, NOTE) == ["# Streaks\n\nRewritten."]
