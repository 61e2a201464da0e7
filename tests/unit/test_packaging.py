"""What pyproject.toml promises: package data that exists, extras the hints name."""

import sys
from pathlib import Path

import pytest
from util import user_error

from translator.plots.figures import plot_by_length

ROOT = Path(__file__).resolve().parents[2]


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_package_data_files_exist():
    for package, names in pyproject()["tool"]["setuptools"]["package-data"].items():
        for name in names:
            assert (ROOT / package.replace(".", "/") / name).is_file(), (package, name)


def test_missing_plot_dependency_names_the_projects_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    message = user_error(plot_by_length, {}, str(tmp_path / "p.png"))
    assert 'pip install "translator[plot]"' in message and "matplotlib" in message
    extras = pyproject()["project"]["optional-dependencies"]
    assert any(dep.startswith("matplotlib") for dep in extras["plot"])


def test_the_tensorboard_extra_exists_and_make_install_brings_it():
    extras = pyproject()["project"]["optional-dependencies"]
    assert any(dep.startswith("tensorboard") for dep in extras["tensorboard"])
    install = [
        line for line in (ROOT / "Makefile").read_text().splitlines() if "pip install" in line
    ]
    assert any("tensorboard" in line and "-e" in line for line in install), install


def test_the_serve_extra_exists_and_make_install_brings_it():
    extras = pyproject()["project"]["optional-dependencies"]
    assert {dep.split(">")[0] for dep in extras["serve"]} >= {"fastapi", "uvicorn"}
    install = [
        line for line in (ROOT / "Makefile").read_text().splitlines() if "pip install" in line
    ]
    assert any("serve" in line and "-e" in line for line in install), install
