"""The embedding backfill says what it does: an INFO line with the count, a bar when asked for."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from assocmem import Memory
from assocmem.testing import ToyEmbedder

pytest.importorskip("numpy")

TEXTS = ("the cat sat on the mat", "quarterly revenue grew", "the deploy timed out")


def unembedded_store(target: str) -> None:
    with Memory(target) as memory:
        for text in TEXTS:
            memory.write(text)


def test_a_backfill_logs_its_count_and_draws_a_bar_when_asked(
    db_path: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    unembedded_store(db_path)
    monkeypatch.setenv("ASSOCMEM_PROGRESS", "1")
    with caplog.at_level(logging.INFO, logger="assocmem.vectors.space"):
        with Memory(db_path, embedder=ToyEmbedder()) as memory:
            assert memory.read("cat on a mat").items[0].text == TEXTS[0]
    err = capsys.readouterr().err
    assert "embedding memories" in err and "3/3" in err
    assert [r.getMessage() for r in caplog.records] == [
        "embedding 3 memories stored without a vector (toy-hash-64)"
    ]


@pytest.mark.parametrize("setting", [None, "0"])
def test_a_backfill_is_silent_off_a_terminal(
    store_target: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setting: str | None,
) -> None:
    target = store_target()
    unembedded_store(target)
    if setting is None:
        monkeypatch.delenv("ASSOCMEM_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("ASSOCMEM_PROGRESS", setting)
    embedder = ToyEmbedder()
    with Memory(target, embedder=embedder) as memory:
        assert memory.read("cat on a mat").items[0].text == TEXTS[0]
    assert sum(embedder.calls) == len(TEXTS) + 1  # the backfill ran: three texts, one query
    assert capsys.readouterr().err == ""


def test_a_store_with_every_vector_logs_nothing(
    db_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with Memory(db_path, embedder=ToyEmbedder()) as memory:
        memory.write(TEXTS[0])
    with caplog.at_level(logging.INFO, logger="assocmem.vectors.space"):
        Memory(db_path, embedder=ToyEmbedder()).close()
    assert caplog.records == []
