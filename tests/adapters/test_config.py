"""Configuration: flag over environment over default, one data directory, embedders built
from settings or refused with the missing field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assocmem.config import ENVIRONMENT, Config, data_dir, default_db
from assocmem.errors import InvalidInput
from assocmem.vectors import local as local_embedders
from assocmem.vectors.embedders import register_embedder, unregister_embedder
from assocmem.vectors.http import HttpEmbedder


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in [*ENVIRONMENT.values(), "ASSOCMEM_HOME", "XDG_DATA_HOME"]:
        monkeypatch.delenv(variable, raising=False)


def test_data_dir_prefers_assocmem_home_then_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "assocmem"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "assocmem"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "assocmem"
    monkeypatch.setenv("ASSOCMEM_HOME", str(tmp_path / "mine"))
    assert data_dir() == tmp_path / "mine"


def test_the_store_and_the_models_share_one_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ASSOCMEM_HOME", str(tmp_path))
    assert default_db() == str(tmp_path / "memory.db")
    assert local_embedders.default_models_dir() == tmp_path / "models"
    monkeypatch.setenv("ASSOCMEM_DB", str(tmp_path / "env.db"))
    assert default_db() == str(tmp_path / "env.db")


@pytest.mark.parametrize(
    ("flags", "environ", "expected"),
    [
        ({}, {}, {"agent": "default", "embedder": None, "log_level": "info"}),
        ({}, {"ASSOCMEM_AGENT": "env", "ASSOCMEM_LOG_LEVEL": "debug"},
         {"agent": "env", "log_level": "debug"}),
        ({"agent": "flag"}, {"ASSOCMEM_AGENT": "env"}, {"agent": "flag"}),
        ({"keys": "flag.json"}, {"ASSOCMEM_KEYS": "env.json"}, {"keys": "flag.json"}),
        ({"embedder_dims": 8}, {"ASSOCMEM_EMBEDDER_DIMS": "16"}, {"embedder_dims": 8}),
        ({}, {"ASSOCMEM_EMBEDDER_DIMS": "16"}, {"embedder_dims": 16}),
        ({"db": "flag.db"}, {"ASSOCMEM_DB": "env.db"}, {"db": "flag.db"}),
        ({"db": None}, {"ASSOCMEM_DB": "env.db"}, {"db": "env.db"}),
        ({"embedder": ""}, {"ASSOCMEM_EMBEDDER": "minilm"}, {"embedder": ""}),
    ],
)  # fmt: skip
def test_a_flag_beats_the_environment_which_beats_the_default(
    flags: dict[str, object], environ: dict[str, str], expected: dict[str, object]
) -> None:
    config = Config.load(flags, environ)
    assert {name: getattr(config, name) for name in expected} == expected


def test_the_default_db_is_in_the_data_dir(tmp_path: Path) -> None:
    config = Config.load({}, {"ASSOCMEM_HOME": str(tmp_path)})
    assert config.db == str(tmp_path / "memory.db")


@pytest.mark.parametrize("dims", ["0", "wide", "-3"])
def test_bad_dims_name_the_field(dims: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Config.load({}, {"ASSOCMEM_EMBEDDER_DIMS": dims})
    assert caught.value.field == "embedder_dims"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({}, "embedder_url"),
        ({"embedder_url": "https://api.example.com/v1"}, "embedder_model"),
        ({"embedder_url": "https://api.example.com/v1", "embedder_model": "m"}, "embedder_dims"),
    ],
)
def test_the_http_embedder_names_its_missing_setting(settings: dict[str, str], field: str) -> None:
    config = Config.load({"embedder": "openai", **settings}, {})
    with pytest.raises(InvalidInput) as caught:
        config.build_embedder()
    assert caught.value.field == field and field in caught.value.message


def test_the_http_embedder_is_built_with_its_key_from_the_named_variable() -> None:
    settings = {"embedder": "openai", "embedder_url": "https://api.example.com/v1",
                "embedder_model": "text-embedding-3-small", "embedder_dims": 1536,
                "embedder_key_env": "MY_EMBEDDING_KEY"}  # fmt: skip
    config = Config.load(settings, {})
    with pytest.raises(InvalidInput) as caught:
        config.build_embedder({})
    assert caught.value.field == "embedder_key_env" and "MY_EMBEDDING_KEY" in caught.value.message
    embedder = config.build_embedder({"MY_EMBEDDING_KEY": "sk-test"})
    assert isinstance(embedder, HttpEmbedder)
    assert embedder.endpoint == "https://api.example.com/v1/embeddings"
    assert (embedder.model_id, embedder.dims, embedder._api_key) == (
        "http:text-embedding-3-small",
        1536,
        "sk-test",
    )


def test_a_named_embedder_is_built_through_the_registry() -> None:
    built = HttpEmbedder(base_url="http://127.0.0.1:9/v1", model="m", dims=4)
    register_embedder("config-test", lambda: built)
    try:
        assert Config.load({"embedder": "config-test"}, {}).build_embedder() is built
    finally:
        unregister_embedder("config-test")
    assert Config.load({}, {}).build_embedder() is None
    with pytest.raises(InvalidInput, match="unknown embedder"):
        Config.load({"embedder": "no-such-embedder"}, {}).build_embedder()
