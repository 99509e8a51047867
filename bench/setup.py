"""assocmem-bench carries the version of the assocmem beside it, written once in
``src/assocmem/__init__.py``. A source distribution has no ``../src``: built from one,
the version is the one its PKG-INFO recorded."""

import ast
import re
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def version() -> str:
    source = HERE.parent / "src" / "assocmem" / "__init__.py"
    if source.is_file():
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__version__"
                for target in node.targets
            ):
                return str(ast.literal_eval(node.value))
    recorded = re.search(r"^Version: (\S+)$", (HERE / "PKG-INFO").read_text(), re.M)
    if recorded is None:
        raise SystemExit("assocmem-bench: no ../src/assocmem/__init__.py and no PKG-INFO")
    return recorded[1]


setup(version=version())
