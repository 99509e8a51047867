"""apply_links writes only inside the vault whatever is swapped under it: a note's folder
or the note swapped for a link out (or another file) between the read and the write is
skipped and reported, nothing outside the root is created or changed, and the other
notes are written."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.vault import maintain
from tests.vault.conftest import files

pytestmark = pytest.mark.usefixtures("backend")

SECRET = "hunter2 is the root password"
BREAD, STARTER, HABITS = (
    "cooking/Bread Hydration.md",
    "cooking/Sourdough Starter.md",
    "habits/Habit Loops.md",
)
TARGETS = ["Bread Hydration", "Sourdough Starter", "Habit Loops"]
# Notes a swapper races for, and apply_links runs racing it: enough that a write which
# follows a link is caught doing so, in a few seconds of test.
RACE_NOTES = 12
RACE_RUNS = 8


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the vault holding notes of the cooking notes' names, secrets in them."""
    folder = tmp_path / "outside"
    folder.mkdir()
    for name in ("Bread Hydration.md", "Sourdough Starter.md"):
        (folder / name).write_text(f"# {name}\n\n{SECRET}.\n")
    return folder


def as_the_write_starts(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> list[str]:
    """Run ``act`` once, as the first temporary file of a write is created: after the
    note was read and checked, before it is replaced. Returns a list recording it ran."""
    real_open, ran = os.open, list[str]()

    def act_then_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and ".assocmem-" in os.fsdecode(path) and not ran:
            act()
            ran.append("acted")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", act_then_open)
    return ran


def swap_folder_for_link(vault: Path, outside: Path) -> None:
    (vault / "cooking").rename(vault.parent / "cooking-away")
    (vault / "cooking").symlink_to(outside, target_is_directory=True)


def swap_note_for_link(vault: Path, outside: Path) -> None:
    (vault / BREAD).unlink()
    (vault / BREAD).symlink_to(outside / "Bread Hydration.md")


def swap_note_for_hard_link(vault: Path, outside: Path) -> None:
    os.link(outside / "Bread Hydration.md", vault / "cooking" / ".swap")
    os.replace(vault / "cooking" / ".swap", vault / BREAD)


def edit_note(vault: Path, outside: Path) -> None:
    with (vault / BREAD).open("a") as note:
        note.write("An edit saved as apply_links writes.\n")


SWAPS = {
    "the folder for a link out": (swap_folder_for_link, {BREAD: "swapped", STARTER: "swapped"}),
    "the note for a link out": (swap_note_for_link, {BREAD: "swapped"}),
    "the note for a hard link to a file outside": (swap_note_for_hard_link, {BREAD: "swapped"}),
    "the note edited": (edit_note, {BREAD: "changed"}),
}
REASONS = {"swapped": "SWAPPED", "changed": "CHANGED"}  # maintain's constants, by name


@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_a_swap_before_the_write_is_skipped_and_nothing_outside_changes(
    memory: Memory,
    vault: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    swap: tuple[Callable[[Path, Path], None], dict[str, str]],
) -> None:
    act, skipped = swap
    memory.vault_index(str(vault))
    before, outside_before, cooking = files(vault), files(outside), files(vault / "cooking")
    ran = as_the_write_starts(monkeypatch, lambda: act(vault, outside))
    applied = memory.apply_links(TARGETS, dry_run=False)
    monkeypatch.undo()
    assert ran == ["acted"]
    assert files(outside) == outside_before  # nothing created, nothing overwritten
    away = vault.parent / "cooking-away"
    if away.exists():  # the folder moved out holds what it held, and no temporary file
        assert files(away) == cooking
    assert applied.written == 3 - len(skipped)
    assert applied.index is not None
    reasons = {p: getattr(maintain, REASONS[why]) for p, why in skipped.items()}
    assert {p: applied.index.skipped.get(p) for p in reasons} == reasons
    after = files(vault)
    assert b"\n## Related (suggested)\n" in after[HABITS]  # the other notes are written
    assert after[HABITS].startswith(before[HABITS])
    if BREAD in after and "changed" in skipped.values():
        assert after[BREAD].endswith(b"An edit saved as apply_links writes.\n")  # kept
    if skipped.keys() == {BREAD}:
        assert b"\n## Related (suggested)\n" in after[STARTER]
        assert not any(n.startswith(".assocmem-") for n in os.listdir(vault / "cooking"))


def test_a_note_swapped_for_a_link_stays_a_link(
    memory: Memory, vault: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.vault_index(str(vault))
    as_the_write_starts(monkeypatch, lambda: swap_note_for_link(vault, outside))
    memory.apply_links(TARGETS, dry_run=False)
    assert (vault / BREAD).is_symlink()  # never replaced: the link is not ours to write
    assert os.readlink(vault / BREAD) == str(outside / "Bread Hydration.md")


# Swaps the race folder for a link out of the vault and back, as fast as it can, in a
# process of its own (as an attacker would), while the test says go (b"g") and until it
# says stop (b"s"); the folder itself waits inside the vault, under a dot name.
SWAPPER = """
import os, select, sys, time
race, kept, outside = sys.argv[1:]
print("ready", flush=True)
while os.read(0, 1) == b"g":
    while not select.select([0], [], [], 0)[0]:
        os.rename(race, kept)
        os.symlink(outside, race)
        os.unlink(race)
        os.rename(kept, race)
        time.sleep(0.0002)  # a moment present, so that some writes get through
    os.read(0, 1)
    print("stopped", flush=True)
"""


def race_note(i: int) -> str:
    return f"# Race {i}\n\nSourdough starter hydration and flour fermentation, take {i}.\n"


def test_a_folder_swapped_for_a_link_over_and_over_is_never_written_through(
    memory: Memory, vault: Path, outside: Path
) -> None:
    race = vault / "race"
    race.mkdir()
    for i in range(RACE_NOTES):
        (outside / f"Race {i}.md").write_text(f"# Race {i}\n\n{SECRET}.\n")
    outside_before = files(outside)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(race), str(vault / ".race-kept"), str(outside)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    tried, failed = 0, list[str]()
    try:
        assert swapper.stdin and swapper.stdout and swapper.stdout.readline() == "ready\n"
        for _ in range(RACE_RUNS):
            for i in range(RACE_NOTES):  # every race note an orphan again
                (race / f"Race {i}.md").write_text(race_note(i))
            memory.vault_index(str(vault))
            swapper.stdin.write("g")
            swapper.stdin.flush()
            try:
                applied = memory.apply_links(dry_run=False)
                tried += sum(p.changes for p in applied.plans)
            except OSError as exc:  # a swap must be skipped, never fail the run
                failed.append(repr(exc))
            swapper.stdin.write("s")
            swapper.stdin.flush()
            assert swapper.stdout.readline() == "stopped\n"
    finally:
        swapper.kill()
        swapper.wait()
    assert files(outside) == outside_before  # no outside write, in any run
    assert failed == []
    assert tried > 0  # the writes were raced, not all refused at the plan
