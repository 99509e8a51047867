"""Fixtures of the links tests."""

from __future__ import annotations

import pytest

from assocmem.links.store import LinkQueries


@pytest.fixture
def folds_in_the_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folds run in the writer's transaction, at the write that makes one due, as the
    tests of a fold's own steps need (`LinkQueries.folds_in_background`)."""
    monkeypatch.setattr(LinkQueries, "folds_in_background", False)
