"""What pyproject.toml promises: package data that exists."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_package_data_files_exist():
    for package, names in pyproject()["tool"]["setuptools"]["package-data"].items():
        for name in names:
            assert (ROOT / package.replace(".", "/") / name).is_file(), (package, name)
