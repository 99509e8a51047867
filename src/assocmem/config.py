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
}
HOME_VARIABLE = "ASSOCMEM_HOME"
# The registered names of embedders that take the HTTP settings (vectors/http.py).
HTTP_EMBEDDERS = frozenset({"openai"})


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where assocmem keeps its files: ``$ASSOCMEM_HOME``, else ``$XDG_DATA_HOME/assocmem``,
    else ``~/.local/share/assocmem``.

    A relative ``XDG_DATA_HOME`` is ignored, as the XDG base directory specification
    requires. Nothing is created here.
    """
    env = os.environ if environ is None else environ
    if env.get(HOME_VARIABLE):
        return Path(env[HOME_VARIABLE]).expanduser()
    data_home = env.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "assocmem"


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
    log_level: str = "warning"

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
        if "embedder_dims" in values:
            values["embedder_dims"] = _positive_int(values["embedder_dims"], "embedder_dims")
        return cls(**values)

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
