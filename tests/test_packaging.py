"""The distributions built from the repository: the assocmem wheel holds the assocmem
package alone, and the benchmarks are a distribution of their own, assocmem-bench,
which registers `assocmem bench` and carries assocmem's version.

Each wheel is built by pip from a copy of the sources, so the checkout gains no build
folders."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import assocmem

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a clone holds for the two builds: the root's project files, src/ and bench/."""
    copy = tmp_path_factory.mktemp("source")
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for folder in ("src", "bench"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    return copy


def wheel(project: Path, out: Path) -> zipfile.ZipFile:
    """The wheel pip builds from ``project``, without its dependencies."""
    # With setuptools already here the build needs no network and no fresh environment.
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", str(out),
         str(project)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("*.whl")
    return zipfile.ZipFile(built)


def top_level(archive: zipfile.ZipFile) -> set[str]:
    names = {name.split("/")[0] for name in archive.namelist()}
    return {name for name in names if not name.endswith((".dist-info", ".data"))}


def metadata(archive: zipfile.ZipFile, name: str) -> str:
    (found,) = [n for n in archive.namelist() if n.endswith(f".dist-info/{name}")]
    return archive.read(found).decode()


@pytest.mark.slow
def test_the_assocmem_wheel_holds_only_assocmem(source: Path, tmp_path: Path) -> None:
    with wheel(source, tmp_path) as archive:
        assert top_level(archive) == {"assocmem"}
        assert "assocmem_bench" not in metadata(archive, "entry_points.txt")
        assert f"Version: {assocmem.__version__}\n" in metadata(archive, "METADATA")
        # Every migration ships, the engine's and each capability's beside its part: a
        # wheel without one would refuse or break the stores it should open.
        shipped = {n for n in archive.namelist() if n.endswith(".sql")}
        in_tree = {
            str(p.relative_to(ROOT / "src"))
            for p in (ROOT / "src" / "assocmem").glob("*/migrations/*/*.sql")
        }
        assert len(in_tree) > 40 and shipped == in_tree


@pytest.mark.slow
def test_the_benchmarks_are_their_own_distribution(source: Path, tmp_path: Path) -> None:
    with wheel(source / "bench", tmp_path) as archive:
        assert top_level(archive) == {"assocmem_bench"}
        assert "assocmem_bench/data/rewordings.json" in archive.namelist()
        points = metadata(archive, "entry_points.txt")
        assert "[assocmem.cli]\nbench = assocmem_bench.cli:register" in points
        info = metadata(archive, "METADATA")
        assert "Name: assocmem-bench\n" in info
        assert f"Version: {assocmem.__version__}\n" in info
        assert "Requires-Dist: assocmem\n" in info
