"""Configuration of the entry points (CLI, ``serve``, ``mcp``), read in one place.

Every setting has a flag, most have an environment variable, all have a default;
a flag given on the command line beats the environment, which beats the default.
The library itself reads no environment (STYLE 19): only `Config.load`,
`data_dir` and `default_db` do, and only when an entry point calls them.

Invariant: a `Config` is complete and frozen once built; `Config.build_embedder`
either returns a ready `Embedder` (or None) or raises `InvalidInput` naming the
setting that is missing or malformed, never a ``TypeError`` from a constructor.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.paths import data_dir
from assocmem.store import POSTGRES_SCHEMES
from assocmem.vectors import local
from assocmem.vectors.embedders import Embedder, load_embedder

# Setting -> the environment variable that supplies it when no flag does.
ENVIRONMENT: dict[str, str] = {
    "db": "ASSOCMEM_DB",
    "agent": "ASSOCMEM_AGENT",
    "embedder": "ASSOCMEM_EMBEDDER",
    "embedder_url": "ASSOCMEM_EMBEDDER_URL",
    "embedder_model": "ASSOCMEM_EMBEDDER_MODEL",
    "embedder_dims": "ASSOCMEM_EMBEDDER_DIMS",
    "embedder_key_env": "ASSOCMEM_EMBEDDER_KEY_ENV",
    "keys": "ASSOCMEM_KEYS",
    "log_level": "ASSOCMEM_LOG_LEVEL",
    "vault_roots": "ASSOCMEM_VAULT_ROOTS",  # folders joined by os.pathsep
    "strict_corroboration": "ASSOCMEM_STRICT_CORROBORATION",  # 1 / true / yes
    "receipts": "ASSOCMEM_RECEIPTS",
    "receipt_key_file": "ASSOCMEM_RECEIPT_KEY_FILE",
}
# The registered names of embedders that take the HTTP settings (vectors/http.py).
HTTP_EMBEDDERS = frozenset({"openai"})


def default_db(environ: Mapping[str, str] | None = None) -> str:
    """``$ASSOCMEM_DB``, else ``memory.db`` in `data_dir`."""
    env = os.environ if environ is None else environ
    return env.get(ENVIRONMENT["db"]) or str(data_dir(env) / "memory.db")


@dataclass(frozen=True)
class Config:
    """The settings an entry point runs with.

    Parameters:

    - ``db``: the store: a SQLite path, ``:memory:`` or a ``postgresql://`` URL.
    - ``agent``, ``project``, ``channel``: the scope `Memory` opens in.
    - ``embedder``: a registered embedder name, or None for no vector arm.
    - ``embedder_url``, ``embedder_model``, ``embedder_dims``: the HTTP embedder's
      ``base_url``, ``model`` and ``dims``.
    - ``embedder_key_env``: the NAME of the environment variable holding the HTTP
      embedder's API key (the key itself never sits in a flag or a process listing).
    - ``keys``: the server's API key file.
    - ``log_level``: the server's log level.
    - ``vault_roots``: the folders a served vault may be indexed from (none: refused).
    - ``strict_corroboration``, ``receipts``: the served memory's trust settings.
    - ``receipt_key_file``: a file holding the hex Ed25519 key that signs receipts (the key
      itself never sits in a flag or a process listing).
    """

    db: str
    agent: str = "default"
    project: str = ""
    channel: str = ""
    embedder: str | None = None
    embedder_url: str | None = None
    embedder_model: str | None = None
    embedder_dims: int | None = None
    embedder_key_env: str | None = None
    keys: str | None = None
    log_level: str = "info"  # the server logs every request at info
    vault_roots: tuple[str, ...] = ()
    strict_corroboration: bool = False
    receipts: bool = False
    receipt_key_file: str | None = None

    @classmethod
    def load(
        cls,
        args: argparse.Namespace | Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Config:
        """The settings from ``args`` (parsed flags; None or absent means not given),
        else ``environ`` (default `os.environ`), else the defaults."""
        env = os.environ if environ is None else environ
        given = vars(args) if isinstance(args, argparse.Namespace) else dict(args or {})
        values: dict[str, Any] = {}
        for field in fields(cls):
            value = given.get(field.name)
            if value is None:
                value = env.get(ENVIRONMENT.get(field.name, "")) or None
            if value is not None:
                values[field.name] = value
        values["db"] = values.get("db") or default_db(env)
        if isinstance(values.get("vault_roots"), str):
            values["vault_roots"] = values["vault_roots"].split(os.pathsep)
        if "vault_roots" in values:
            values["vault_roots"] = tuple(str(r) for r in values["vault_roots"] if r)
        for name in ("strict_corroboration", "receipts"):
            if name in values:
                values[name] = _flag(values[name], name)
        if "embedder_dims" in values:
            values["embedder_dims"] = _positive_int(values["embedder_dims"], "embedder_dims")
        return cls(**values)

    def read_receipt_key(self) -> str | None:
        """The hex signing key in ``receipt_key_file``, or None when no file is set."""
        if not self.receipt_key_file:
            return None
        try:
            return Path(self.receipt_key_file).expanduser().read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"cannot read the receipt key file {self.receipt_key_file!r}: {exc}",
                field="receipt_key_file",
            ) from exc

    def build_embedder(self, environ: Mapping[str, str] | None = None) -> Embedder | None:
        """The configured embedder, built (no model is contacted yet for HTTP), or None."""
        if not self.embedder:
            return None
        if self.embedder not in HTTP_EMBEDDERS:
            return load_embedder(self.embedder)
        return load_embedder(self.embedder, **self._http_options(environ))

    def _http_options(self, environ: Mapping[str, str] | None) -> dict[str, Any]:
        options = {
            "base_url": self.embedder_url,
            "model": self.embedder_model,
            "dims": self.embedder_dims,
        }
        for name, value in zip(("url", "model", "dims"), options.values(), strict=True):
            if value is None:
                raise InvalidInput(
                    f"--embedder {self.embedder} needs embedder_{name}: pass "
                    f"--embedder-{name} or set ${ENVIRONMENT[f'embedder_{name}']}",
                    field=f"embedder_{name}",
                )
        return {**options, "api_key": self._api_key(environ)}

    def _api_key(self, environ: Mapping[str, str] | None) -> str | None:
        if not self.embedder_key_env:
            return None
        env = os.environ if environ is None else environ
        key = env.get(self.embedder_key_env)
        if not key:
            raise InvalidInput(
                f"embedder_key_env names ${self.embedder_key_env}, which is not set",
                field="embedder_key_env",
            )
        return key


def _positive_int(value: Any, field: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number <= 0:
        raise InvalidInput(f"{field} must be a positive integer, got {value!r}", field=field)
    return number


# Bare words that name a backend, not a place: ``--db postgres`` once made a SQLite
# file called ``postgres``. A file by such a name is still reachable as ``./postgres``.
BACKEND_NAMES = frozenset({"postgres", "postgresql", "pg", "sqlite", "sqlite3"})


def store_target(db: str) -> str:
    """URLs and ``:memory:`` pass unchanged; a file path is expanded and its folder made;
    a backend's name is refused (`InvalidInput` naming ``db``): ``db`` says where."""
    if db == ":memory:" or db.startswith(POSTGRES_SCHEMES):
        return db
    if db.strip().lower() in BACKEND_NAMES:
        raise InvalidInput(
            f"--db is where the store is, not a backend name: pass a SQLite file path "
            f"(e.g. ./memory.db) or a postgresql:// URL (e.g. postgresql://user@host/dbname), "
            f"not {db!r}; a file by that name is ./{db}",
            field="db",
        )
    path = Path(db).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


# Embedder forms that are built once from the packaged model, offline.
BUILDS = {"minilm-onnx": local.build_onnx, "minilm-static": local.build_static}


def build_embedder_form(name: str, model_dir: str | None = None) -> Path:
    """Build ``name``'s form into ``model_dir`` (default: ``models/<name>`` in `data_dir`)."""
    if name not in BUILDS:
        raise InvalidInput(f"only {', '.join(BUILDS)} need building", field="name")
    folder = Path(model_dir) if model_dir else local.default_models_dir() / name
    return BUILDS[name](folder)


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise InvalidInput(f"{name} must be true or false, got {value!r}", field=name)
