"""Fixtures of the vault tests: a fresh copy of the bundled sample vault, and a memory
on each backend (a SQLite file, PostgreSQL) to index it into."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assocmem import Memory

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "assocmem" / "vault" / "sample"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A writable copy of the sample vault."""
    copy = tmp_path / "vault"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.fixture
def memory(store_target: Callable[..., str]) -> Iterator[Memory]:
    """A memory on a fresh store of each backend (see tests/conftest.py)."""
    with Memory(store_target()) as mem:
        yield mem


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (to show what a call changed)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
