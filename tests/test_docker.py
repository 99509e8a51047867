"""The Dockerfile and compose.yaml, checked without a Docker engine (none runs in CI).

What can be checked honestly is checked against the real code: the image's
command parses with the real CLI parser, its install line names extras and the
model package the repository holds and no torch, the health check hits a route the server has, and
the compose file wires the server to its database through settings the server reads.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from assocmem.adapters.cli import build_parser
from assocmem.config import ENVIRONMENT
from assocmem.paths import HOME_VARIABLE
from assocmem.store import POSTGRES_SCHEMES

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = frozenset(ENVIRONMENT.values()) | {HOME_VARIABLE}


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines()]
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.partition(" ") for line in lines)
        if word and not word.startswith("#")
    ]


def one(name: str) -> str:
    found = [args for word, args in instructions() if word == name]
    assert len(found) == 1, f"one {name} in the Dockerfile"
    return found[0]


def image_env() -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in shlex.split(one("ENV")))


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def compose() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    return loaded


def served_command() -> list[str]:
    entrypoint, command = json.loads(one("ENTRYPOINT")), json.loads(one("CMD"))
    assert entrypoint == ["assocmem"]
    assert pyproject()["project"]["scripts"]["assocmem"] == "assocmem.adapters.cli:main"
    return list(command)


def test_the_image_command_parses_with_the_real_cli() -> None:
    args = build_parser().parse_args(served_command())
    assert (args.command, args.host, args.port) == ("serve", "0.0.0.0", 8765)
    assert one("EXPOSE") == str(args.port)


def test_the_image_installs_extras_that_exist_its_model_package_and_no_torch() -> None:
    installs = [args for word, args in instructions() if word == "RUN" and "pip install" in args]
    extras = pyproject()["project"]["optional-dependencies"]
    (line,) = [line for line in installs if ".[" in line]
    wanted = re.search(r'"\.\[([a-z,-]+)\]"', line)
    assert wanted is not None and set(wanted.group(1).split(",")) == {"server", "postgres", "embed"}
    assert set(wanted.group(1).split(",")) <= set(extras)
    assert not any("torch" in install for install in installs)
    assert not any("torch" in requirement for requirement in extras["embed"])
    # The model package is copied from the repository and installed beside the extras.
    model = "packages/assocmem-minilm"
    assert f"./{model}" in line.split()
    assert any(args.split()[0] == model for word, args in instructions() if word == "COPY")
    assert (ROOT / model / "pyproject.toml").is_file()


def test_the_image_runs_as_a_user_with_its_data_in_a_volume() -> None:
    assert one("USER") not in ("root", "0")
    env = image_env()
    assert set(env) <= SETTINGS
    assert one("VOLUME") == "/data"
    assert env[HOME_VARIABLE] == "/data" and env["ASSOCMEM_KEYS"].startswith("/data/")
    assert env["ASSOCMEM_EMBEDDER"] == "minilm"


def test_the_health_check_asks_a_route_the_server_serves() -> None:
    pytest.importorskip("fastapi")
    from assocmem.adapters.server.api import create_app

    check = one("HEALTHCHECK")
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", check)
    assert url is not None and int(url.group(1)) == build_parser().parse_args(served_command()).port
    paths = {getattr(route, "path", None) for route in create_app(":memory:").routes}
    assert url.group(2) == "/healthz" and url.group(2) in paths


def test_compose_wires_the_server_to_pgvector() -> None:
    services = compose()["services"]
    assert set(services) == {"server", "db"}
    server, db = services["server"], services["db"]
    assert db["image"] == "pgvector/pgvector:pg17"
    assert set(server["environment"]) <= SETTINGS
    url = urlsplit(server["environment"]["ASSOCMEM_DB"])
    assert server["environment"]["ASSOCMEM_DB"].startswith(POSTGRES_SCHEMES)
    assert (url.hostname, url.port) == ("db", 5432)
    postgres = db["environment"]
    assert (url.username, url.password, url.path.lstrip("/")) == (
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )
    port = build_parser().parse_args(served_command()).port
    assert server["ports"] == [f"{port}:{port}"]
    assert server["depends_on"]["db"]["condition"] == "service_healthy"
    assert any(v.endswith(":/data") for v in server["volumes"])


def test_the_build_context_leaves_out_what_the_image_does_not_need() -> None:
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", "tests"} <= set(ignored)
    copied = [args.split()[0] for word, args in instructions() if word == "COPY"]
    assert not set(copied) & set(ignored)
