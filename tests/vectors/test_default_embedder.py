"""The default ``minilm``: the int8 ONNX form, shipped or built once, old torch-form stores kept.

Every test here loads the real model (marked ``model``) and skips without the
embed extra. With the ``assocmem-minilm`` package a first use loads its form and
builds nothing. Without it (the processes below hide the installed package, as
an environment without it would lack it), two processes started at once on an
empty data dir build the form once between them, and a third later finds it
built; what they build is what the package ships.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.capabilities import open_store
from assocmem.vectors import local

pytestmark = [pytest.mark.model, pytest.mark.slow]

CAT = "the cat sat on the mat"
MONEY = "quarterly revenue grew"
QUESTION = "a feline resting on a rug"
BUILD_LINE = "building the int8 ONNX form"
NOT_INSTALLED_LINE = "is not installed: building that form"
LOAD_LINE = "loading the int8 ONNX form"
BAR = f"building {local.ONNX_DIR_NAME} (once)"
HEAVY = ("torch", "transformers", "sentence_transformers")
# A first use, as a user's process makes it: the registered name, INFO logging on.
# Its second line of output names the heavy modules it imported.
FIRST_USE = f"""
import logging, sys
if sys.argv[2] == "without-package":
    sys.modules[{local.ONNX_PACKAGE!r}] = None
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
from assocmem import Memory
with Memory(sys.argv[1], embedder="minilm") as memory:
    memory.write({CAT!r})
    memory.write({MONEY!r})
    print(memory.read({QUESTION!r}).items[0].text)
print(sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r}))
"""


@dataclass(frozen=True)
class FirstUses:
    models: Path
    concurrent: list[subprocess.CompletedProcess[str]]
    later: subprocess.CompletedProcess[str]
    dbs: list[Path]
    onnx_inode: int


def run_first_use(
    db: Path, environ: dict[str, str], package: str = "without-package"
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", FIRST_USE, str(db), package],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.fixture(scope="module")
def first_uses(tmp_path_factory: pytest.TempPathFactory) -> FirstUses:
    for module in ("torch", "transformers", "onnx", "onnxscript", "onnxruntime", "tokenizers"):
        pytest.importorskip(module)
    base = tmp_path_factory.mktemp("first-use")
    environ = {**os.environ, "XDG_DATA_HOME": str(base / "data"), "ASSOCMEM_PROGRESS": "1"}
    dbs = [base / f"store-{i}.db" for i in range(3)]
    concurrent = [finished(p) for p in [run_first_use(db, environ) for db in dbs[:2]]]
    models = base / "data" / "assocmem" / "models"
    inode = (models / local.ONNX_DIR_NAME / local.ONNX_FILE).stat().st_ino
    later = finished(run_first_use(dbs[2], environ))
    return FirstUses(models, concurrent, later, dbs, inode)


def test_concurrent_first_uses_build_the_onnx_form_once(first_uses: FirstUses) -> None:
    for done in first_uses.concurrent:
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.splitlines()[0] == CAT
        assert NOT_INSTALLED_LINE in done.stderr  # both say why the build is needed
    builders = [done for done in first_uses.concurrent if BUILD_LINE in done.stderr]
    assert len(builders) == 1
    assert BAR in builders[0].stderr and "4/4" in builders[0].stderr
    assert "one-time step" in builders[0].stderr
    # Whole folders only: no build leftovers beside it, nothing but the form inside.
    assert sorted(p.name for p in first_uses.models.iterdir()) == [
        f".{local.ONNX_DIR_NAME}.lock",
        local.ONNX_DIR_NAME,
    ]
    built = first_uses.models / local.ONNX_DIR_NAME
    assert sorted(p.name for p in built.iterdir()) == [local.ONNX_FILE, local.TOKENIZER_FILE]


def test_a_later_process_reuses_the_built_form(first_uses: FirstUses) -> None:
    assert first_uses.later.returncode == 0, first_uses.later.stderr[-3000:]
    assert first_uses.later.stdout.splitlines()[0] == CAT
    assert BUILD_LINE not in first_uses.later.stderr and BAR not in first_uses.later.stderr
    onnx_file = first_uses.models / local.ONNX_DIR_NAME / local.ONNX_FILE
    assert onnx_file.stat().st_ino == first_uses.onnx_inode


def test_a_new_store_records_the_onnx_form(first_uses: FirstUses) -> None:
    for db in first_uses.dbs:
        store = open_store(str(db))
        try:
            assert store.info("embedder_model") == local.ONNX_MODEL_ID
        finally:
            store.close()


def test_what_the_build_makes_is_what_the_package_ships(first_uses: FirstUses) -> None:
    numpy = pytest.importorskip("numpy")
    if local.packaged_onnx_dir() is None:
        pytest.skip("the assocmem-minilm package is not installed")
    built = local.MiniLMOnnx(model_dir=first_uses.models / local.ONNX_DIR_NAME, build=False)
    shipped = local.MiniLMOnnx()
    assert shipped.model_dir == local.packaged_onnx_dir()
    texts = [CAT, MONEY, QUESTION, *local.CHECK_SENTENCES]
    agreement = (built.embed(texts) * shipped.embed(texts)).sum(axis=1)
    assert numpy.all(agreement > 0.9999), agreement


def test_a_first_use_with_the_package_loads_its_form_builds_nothing_imports_no_torch(
    tmp_path: Path,
) -> None:
    if local.packaged_onnx_dir() is None:
        pytest.skip("the assocmem-minilm package is not installed")
    environ = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "ASSOCMEM_PROGRESS": "1"}
    done = finished(run_first_use(tmp_path / "store.db", environ, "with-package"))
    assert done.returncode == 0, done.stderr[-3000:]
    found, heavy = done.stdout.splitlines()
    assert found == CAT and heavy == "[]"
    assert LOAD_LINE in done.stderr and str(local.packaged_onnx_dir()) in done.stderr
    assert BUILD_LINE not in done.stderr and BAR not in done.stderr
    assert not (tmp_path / "data").exists()  # nothing built, nothing written outside the store
    store = open_store(str(tmp_path / "store.db"))
    try:
        assert store.info("embedder_model") == local.ONNX_MODEL_ID
    finally:
        store.close()


def test_an_old_torch_form_store_keeps_its_form_and_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sentence_transformers")
    db = str(tmp_path / "old.db")
    with Memory(db, embedder=local.MiniLMTorch(device="cpu")) as memory:
        memory.write(CAT)
        memory.write(MONEY)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with Memory(db, embedder="minilm") as memory:
        found = memory.read(QUESTION)
    assert found.items[0].text == CAT and "semantic" in found.items[0].sources
    store = open_store(db)
    try:
        assert store.info("embedder_model") == local.TORCH_MODEL_ID
        assert store.count_missing_vectors() == 0
    finally:
        store.close()
    assert not (tmp_path / "data").exists()  # the torch store never needed the ONNX build


def test_a_failed_build_falls_back_to_the_torch_form_with_a_warning(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the models folder would go")
    default = local.MiniLM(model_dir=blocker / local.ONNX_DIR_NAME, device="cpu")
    with pytest.warns(RuntimeWarning, match="slower torch form"):
        chosen = default.for_store(None)
    assert isinstance(chosen, local.MiniLMTorch)
    assert chosen.embed_one(CAT).shape == (local.MINILM_DIMS,)
    with pytest.raises(OSError):  # a store of ONNX vectors never silently changes form
        default.for_store(local.ONNX_MODEL_ID)
