"""The public surface is exactly `assocmem.__all__`, sorted, and every name exists."""

from __future__ import annotations

import inspect

import assocmem
from assocmem import errors


def test_all_is_sorted_and_exact() -> None:
    assert assocmem.__all__ == sorted(assocmem.__all__)
    public = {
        name for name, value in vars(assocmem).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }  # fmt: skip
    assert public == set(assocmem.__all__)


def test_every_error_class_is_exported_and_rooted() -> None:
    classes = {
        name for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, Exception)
    }  # fmt: skip
    assert classes <= set(assocmem.__all__)
    assert all(issubclass(getattr(errors, name), assocmem.AssocmemError) for name in classes)


def test_every_error_class_is_drawn_in_the_tree() -> None:
    tree = errors.__doc__ or ""
    for name in assocmem.__all__:
        value = getattr(assocmem, name)
        if inspect.isclass(value) and issubclass(value, Exception):
            assert name in tree, f"{name} is missing from the errors.py tree"


def test_every_public_method_has_a_docstring() -> None:
    for name, member in inspect.getmembers(assocmem.Memory, inspect.isfunction):
        if not name.startswith("_"):
            assert member.__doc__, name
