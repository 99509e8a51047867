"""The default ``minilm``: the int8 ONNX form built once on first use, old torch-form stores kept.

Every test here loads the real model (marked ``model``) and skips without the
embed extra. The first-use fixture starts two processes at once on an empty
data dir: between them they build the ONNX form once, and a third process
later finds it built.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.store import open_store
from assocmem.vectors import local

pytestmark = [pytest.mark.model, pytest.mark.slow]

CAT = "the cat sat on the mat"
MONEY = "quarterly revenue grew"
QUESTION = "a feline resting on a rug"
BUILD_LINE = "building the int8 ONNX form"
BAR = f"building {local.ONNX_DIR_NAME} (once)"
# A first use, as a user's process makes it: the registered name, INFO logging on.
FIRST_USE = f"""
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
from assocmem import Memory
with Memory(sys.argv[1], embedder="minilm") as memory:
    memory.write({CAT!r})
    memory.write({MONEY!r})
    print(memory.read({QUESTION!r}).items[0].text)
"""


@dataclass(frozen=True)
class FirstUses:
    models: Path
    concurrent: list[subprocess.CompletedProcess[str]]
    later: subprocess.CompletedProcess[str]
    dbs: list[Path]
    onnx_inode: int


def run_first_use(db: Path, environ: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", FIRST_USE, str(db)],
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
        assert done.stdout.strip() == CAT
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
    assert first_uses.later.stdout.strip() == CAT
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
