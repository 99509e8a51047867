"""The one data-directory rule: where assocmem keeps its files unless told otherwise.

Invariant: every default path (the store, built embedder forms) is under `data_dir`, read
when called, so a changed environment is seen; nothing is created here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

HOME_VARIABLE = "ASSOCMEM_HOME"


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
