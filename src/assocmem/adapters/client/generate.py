"""The operation methods of `Client` and `AsyncClient`, written from the registry.

Each client file holds a block between two markers that this module rewrites: one
method per operation of `surface.operations()`, with `Memory`'s signature and
docstring, sending its ``locals()``; and its import of the result types those methods
name. A test fails when a block is stale.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from types import ModuleType

# -- regenerating the operation methods ----------------------------------------------

BEGIN = "    # -- operations: generated from `surface.operations()`; do not edit by hand --\n"
END = "    # -- end of the generated operations --\n"


def render_operations(*, coroutines: bool = False) -> str:
    """The source of every operation method, from the registry and `Memory`'s signatures
    (``coroutines``: as ``async def`` methods awaiting the call)."""
    from assocmem.memory import Memory
    from assocmem.surface import operations

    blocks = []
    for name in operations():
        method = getattr(Memory, name)
        signature = inspect.signature(method)
        parts = []
        keyword_only = False
        for parameter in signature.parameters.values():
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not keyword_only:
                parts.append("*")
            keyword_only = keyword_only or parameter.kind in (
                inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_POSITIONAL,
            )  # fmt: skip
            parts.append(_parameter_source(parameter))
        returns = signature.return_annotation
        head = _def_source(name, parts, returns, coroutine=coroutines)
        doc = _docstring(inspect.getdoc(method) or name)
        send = f'{"await " if coroutines else ""}self._send("{name}", locals())'
        blocks.append(f'{head}\n        """{doc}"""\n        return cast("{returns}", {send})\n')
    return BEGIN + "\n" + "\n".join(blocks) + "\n" + END


def _parameter_source(parameter: inspect.Parameter) -> str:
    if parameter.annotation is inspect.Parameter.empty:
        return parameter.name  # self
    star = "*" if parameter.kind is inspect.Parameter.VAR_POSITIONAL else ""
    text = f"{star}{parameter.name}: {parameter.annotation}"
    if parameter.default is inspect.Parameter.empty:
        return text
    default = parameter.default
    return f"{text} = {json.dumps(default) if isinstance(default, str) else repr(default)}"


def _def_source(name: str, parts: list[str], returns: str, *, coroutine: bool) -> str:
    """The ``def`` line as the formatter lays it out: one line, one indented line of
    parameters, or one parameter a line."""
    define = f"    {'async ' if coroutine else ''}def {name}("
    one_line = f"{define}{', '.join(parts)}) -> {returns}:"
    if len(one_line) <= 100:
        return one_line
    inner = f"        {', '.join(parts)}"
    if len(inner) <= 100:
        return f"{define}\n{inner}\n    ) -> {returns}:"
    lines = "".join(f"        {p},\n" for p in parts)
    return f"{define}\n{lines}    ) -> {returns}:"


def _docstring(doc: str) -> str:
    """A docstring's text indented as a method's (the first line follows the quotes)."""
    first, *rest = doc.splitlines()
    if not rest:
        return first
    return first + "\n" + "".join(f"        {line}\n" if line else "\n" for line in rest) + " " * 8


def regenerate() -> None:
    """Rewrite the generated blocks of `Client` and `AsyncClient` from the registry (run
    it with ``python -c "from assocmem.adapters import client; client.regenerate()"``)."""
    here = Path(__file__).parent
    for name, coroutines in (("sync.py", False), ("aio.py", True)):
        path = here / name
        source = path.read_text(encoding="utf-8")
        start, end = source.index(BEGIN), source.index(END) + len(END)
        block = render_operations(coroutines=coroutines)
        source = _with_type_imports(source[:start] + block + source[end:], block)
        path.write_text(source, encoding="utf-8")


def _with_type_imports(source: str, block: str) -> str:
    """``source`` importing exactly the result types ``block`` names, each from the
    module that defines it (`assocmem.types`, or a capability's ``types`` module): a
    name must resolve for the client to rebuild a result."""
    named = set(re.findall(r"\b[A-Z]\w*\b", block))
    by_module: dict[str, list[str]] = {}
    for module in _result_type_modules():
        for name in sorted(named):
            found = getattr(module, name, None)
            if isinstance(found, type) and found.__module__ == module.__name__:
                by_module.setdefault(module.__name__, []).append(name)
    found_imports = list(_TYPE_IMPORTS.finditer(source))
    start, end = found_imports[0].start(), found_imports[-1].end()
    lines = [_import_line(module, names) for module, names in sorted(by_module.items())]
    return source[:start] + "".join(lines) + source[end:]


# An import of result types, on one line or parenthesised over several.
_TYPE_IMPORTS = re.compile(r"^from assocmem(?:\.\w+)?\.types import (?:\([^)]*\)|[^\n]*)\n", re.M)


def _result_type_modules() -> list[ModuleType]:
    """`assocmem.types` and every capability's ``types`` module."""
    package = Path(__file__).parents[2]
    names = ["assocmem.types"] + [
        f"assocmem.{path.parent.name}.types" for path in sorted(package.glob("*/types.py"))
    ]
    return [importlib.import_module(name) for name in names]


def _import_line(module: str, names: list[str]) -> str:
    """One import as the formatter writes it: on a line when it fits, else one name a line."""
    line = f"from {module} import {', '.join(names)}\n"
    if len(line) <= 101:
        return line
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"
