"""The local MiniLM forms: offline loading, vectors and meaning, build directions, ONNX agreement.

Tests that load the real model are marked ``model``; each skips when its
optional dependency is not installed, so the suite passes without the embed
extra.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from assocmem.errors import DependencyMissing, EmbedderUnavailable
from assocmem.vectors import local
from assocmem.vectors.embedders import load_embedder, register_embedder, unregister_embedder
from assocmem.vectors.local import MiniLMOnnx, MiniLMStatic, MiniLMTorch

CAT = "the cat sat on the mat"
CAT_AGAIN = "a cat is sitting on a rug"
MONEY = "quarterly revenue grew"
# Chat turns of varied length and topic, for the ONNX agreement check.
TURNS = [
    CAT,
    CAT_AGAIN,
    MONEY,
    "thanks!",
    "ok see you then",
    "Did you see the game last night? They came back in the fourth quarter.",
    "I'm thinking of moving to Lisbon next spring, any tips on neighbourhoods?",
    "The deploy timed out after the release and we had to roll back twice before lunch.",
    "My sister just adopted a rescue greyhound named Pepper and she is the sweetest thing.",
    "Can you remind me what time the dentist appointment is on Thursday?",
    "What's the difference between a Roth IRA and a traditional one?",
    "Caroline went to the LGBTQ support group yesterday and found it really moving.",
    "Python's GIL makes CPU-bound threading less useful than you'd expect.",
    "After the storm the power was out for two full days, so we read by candlelight.",
    "The server returned a 502 error during the peak traffic hour.",
    "I love hiking in the fall when the leaves change color.",
]
NETWORK_EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname"})


class NetworkWatch:
    """Records network audit events while armed (audit hooks cannot be removed)."""

    def __init__(self) -> None:
        self.armed = False
        self.events: list[tuple[str, Any]] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: Any) -> None:
        if self.armed and event in NETWORK_EVENTS:
            self.events.append((event, args))


@pytest.fixture(scope="module")
def minilm_load() -> Iterator[tuple[MiniLMTorch, list[tuple[str, Any]]]]:
    """A torch-form MiniLM for the module, loaded with HF_HUB_OFFLINE unset, network watched."""
    pytest.importorskip("sentence_transformers")
    watch = NetworkWatch()
    with pytest.MonkeyPatch.context() as env:
        env.delenv("HF_HUB_OFFLINE", raising=False)
        env.delenv("TRANSFORMERS_OFFLINE", raising=False)
        watch.armed = True
        try:
            model = MiniLMTorch(device="cpu")
            model.embed_one(CAT)
        finally:
            watch.armed = False
    yield model, watch.events


@pytest.fixture(scope="module")
def minilm(minilm_load: tuple[MiniLMTorch, list[tuple[str, Any]]]) -> MiniLMTorch:
    return minilm_load[0]


def cosine_order(vectors: Any) -> tuple[float, float]:
    """(cat·cat-again, cat·money) for vectors of CAT, CAT_AGAIN, MONEY."""
    return float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])


@pytest.mark.model
def test_minilm_loads_without_touching_the_network(
    minilm_load: tuple[MiniLMTorch, list[tuple[str, Any]]],
) -> None:
    _, events = minilm_load
    assert events == []


@pytest.mark.model
def test_minilm_gives_unit_384d_vectors_that_follow_meaning(minilm: MiniLMTorch) -> None:
    numpy = pytest.importorskip("numpy")
    vectors = minilm.embed([CAT, CAT_AGAIN, MONEY])
    assert (minilm.model_id, minilm.dims, minilm.normalized) == ("all-MiniLM-L6-v2", 384, True)
    assert vectors.shape == (3, 384) and vectors.dtype == numpy.float32
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    near, far = cosine_order(vectors)
    assert near > far + 0.3


@pytest.mark.model
def test_minilm_is_deterministic_across_batches(minilm: MiniLMTorch) -> None:
    numpy = pytest.importorskip("numpy")
    together = minilm.embed(TURNS[:6])
    one_by_one = numpy.stack([minilm.embed_one(t) for t in TURNS[:6]])
    assert numpy.allclose(together, one_by_one, atol=1e-5)


def test_importing_the_modules_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, assocmem.vectors.local, assocmem.vectors.http; "
        "heavy = {'torch', 'sentence_transformers', 'onnxruntime', 'model2vec', 'transformers'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_missing_dependency_names_the_extra() -> None:
    with pytest.raises(DependencyMissing, match=r"assocmem\[embed\]"):
        local._require("assocmem_no_such_module")


def test_default_models_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert local.default_models_dir() == tmp_path / "assocmem" / "models"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "share" / "assocmem" / "models"
    assert local.default_models_dir() == expected
    monkeypatch.delenv("XDG_DATA_HOME")
    assert local.default_models_dir() == expected


@pytest.mark.parametrize(
    ("factory", "options", "modules", "name", "builder"),
    [
        # The ONNX form builds itself unless told not to (test_default_embedder.py).
        (MiniLMOnnx, {"build": False}, ("onnxruntime", "tokenizers"), "minilm-onnx", "build_onnx"),
        (MiniLMStatic, {}, ("model2vec",), "minilm-static", "build_static"),
    ],
)
def test_unbuilt_forms_say_how_to_build_them(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    factory: Any,
    options: dict[str, Any],
    modules: tuple[str, ...],
    name: str,
    builder: str,
) -> None:
    for module in modules:
        pytest.importorskip(module)
    with pytest.raises(EmbedderUnavailable) as caught:
        factory(model_dir=tmp_path / "absent", **options)
    assert f"assocmem embedders build {name}" in str(caught.value)
    assert builder in str(caught.value) and str(tmp_path / "absent") in str(caught.value)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    # Without the assocmem-minilm package, as where it is not installed, the
    # default folder is the data dir's.
    monkeypatch.setitem(sys.modules, local.ONNX_PACKAGE, None)
    with pytest.raises(EmbedderUnavailable, match=str(tmp_path / "data" / "assocmem" / "models")):
        factory(**options)


def test_the_onnx_form_loads_from_its_package_without_building(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for module in ("onnxruntime", "tokenizers", local.ONNX_PACKAGE):
        pytest.importorskip(module)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    embedder = MiniLMOnnx(build=False)
    packaged = local.packaged_onnx_dir()
    assert packaged is not None and embedder.model_dir == packaged
    assert embedder.model_id == __import__(local.ONNX_PACKAGE).MODEL_ID
    assert embedder.embed_one(CAT).shape == (local.MINILM_DIMS,)
    assert not (tmp_path / "data").exists()


def tiny_static_model(folder: Path, dims: int) -> Path:
    """A real model2vec model over an eleven-word vocabulary with random vectors."""
    model2vec = pytest.importorskip("model2vec")
    tokenizers = pytest.importorskip("tokenizers")
    numpy = pytest.importorskip("numpy")
    words = ["[PAD]", "[UNK]", "the", "cat", "sat", "on", "mat", "quarterly", "revenue", "grew"]
    tokenizer = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    vectors = numpy.random.default_rng(0).normal(size=(len(words), dims)).astype(numpy.float16)
    model2vec.StaticModel(vectors=vectors, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def test_static_form_loads_through_the_registry(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")
    folder = tiny_static_model(tmp_path / "static", dims=local.STATIC_PCA_DIMS)
    register_embedder("minilm-static-test", MiniLMStatic)
    try:
        embedder = load_embedder("minilm-static-test", model_dir=folder)
    finally:
        unregister_embedder("minilm-static-test")
    vectors = embedder.embed([CAT, MONEY, "the cat"])
    assert embedder.model_id == "all-MiniLM-L6-v2/model2vec-256"
    assert vectors.shape == (3, 256) and vectors.dtype == numpy.float32
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_static_model_of_another_width_is_refused(tmp_path: Path) -> None:
    folder = tiny_static_model(tmp_path / "static", dims=16)
    with pytest.raises(EmbedderUnavailable, match="16 dimensions, expected 256"):
        MiniLMStatic(model_dir=folder)


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for module in ("torch", "transformers", "onnx", "onnxscript", "onnxruntime", "tokenizers"):
        pytest.importorskip(module)
    return local.build_onnx(tmp_path_factory.mktemp("models") / "minilm-onnx")


@pytest.mark.model
@pytest.mark.slow
def test_built_onnx_form_agrees_with_minilm(minilm: MiniLMTorch, onnx_dir: Path) -> None:
    numpy: ModuleType = pytest.importorskip("numpy")
    assert sorted(p.name for p in onnx_dir.iterdir()) == ["model.onnx", "tokenizer.json"]
    onnx = MiniLMOnnx(model_dir=onnx_dir)
    assert (onnx.model_id, onnx.dims) == ("all-MiniLM-L6-v2/onnx-int8", 384)
    got, want = onnx.embed(TURNS), minilm.embed(TURNS)
    assert numpy.allclose(numpy.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    agreement = (got * want).sum(axis=1)
    assert agreement.mean() > 0.98 and agreement.min() > 0.9
    near, far = cosine_order(got)
    assert near > far + 0.3
    alone = numpy.stack([onnx.embed_one(t) for t in TURNS[:4]])
    assert numpy.allclose(got[:4], alone, atol=1e-6)  # a text's batch-mates change nothing
