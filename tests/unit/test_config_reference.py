"""docs/configuration.md: generated from the typed config, current, and every key described."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
from project import real_keys as _real_keys
from util import ROOT

from translator.config import Config, CorpusConfig
from translator.models import family as families


def load_script():
    path = ROOT / "scripts" / "tools" / "config_reference.py"
    spec = importlib.util.spec_from_file_location("config_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ref():
    return load_script()


def test_the_page_is_current(ref, capsys):
    status = ref.main(["--check"])
    assert status == 0, capsys.readouterr().err  # stale: run scripts/tools/config_reference.py


def test_every_key_has_a_description(ref):
    assert ref.undocumented(ref.sections()) == []


def test_the_page_lists_the_keys_and_defaults_the_loader_has(ref):
    tables = ref.sections()
    page = {}
    for heading, _, keys in tables:
        family = heading.split(": ")[1] if heading.startswith("model.type: ") else None
        page[family] = page.get(family, {}) | {k.name: k.default for k in keys}
    common = page.pop(None)
    expected = {k: v for k, v in _real_keys(Config()).items() if not k.startswith("model.")}
    for split in ("train", "dev", "test", "corpora[].train"):  # a mapping's keys are listed too
        expected |= {f"data.{split}.src": "required", f"data.{split}.tgt": "required"}
    expected |= _real_keys(CorpusConfig(), "data.corpora[].")  # and those of a list's mappings
    assert {k for k in common if not k.startswith("model.")} == set(expected)
    for key, value in expected.items():
        assert common[key] == (value if value == "required" else ref._yaml(value)), key
    assert set(page) == set(families.names())
    for name, own in page.items():
        model = _real_keys(families.model_config(name), "model.")
        shown = {k: v for k, v in common.items() if k.startswith("model.")} | own
        assert set(shown) == set(model), name
        assert all(shown[k] == ref._yaml(v) for k, v in model.items() if k != "model.type")


def test_a_field_without_a_comment_is_caught_and_comments_are_read(ref, tmp_path, monkeypatch):
    (tmp_path / "fake_family.py").write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel, Field

            LIMIT = 7


            class Base(BaseModel):
                # said above,
                # on two lines
                width: int = LIMIT
                depth: float | None = None  # said beside


            class Child(Base):
                width: int = 9
                sizes: list[int] = Field(default_factory=lambda: [1, 2])
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    fields = ref.fields("fake_family", "Child")
    assert [f.name for f in fields.values()] == ["width", "depth", "sizes"]
    keys = {k.name: k for k in ref.keys("x.", list(fields.values()))}
    assert keys["x.width"].meaning == "said above, on two lines"  # kept from the base
    assert keys["x.width"].default == "9"
    assert ref.default(ref.fields("fake_family", "Base")["width"]) == 7
    assert (keys["x.depth"].type, keys["x.depth"].meaning) == ("a number or null", "said beside")
    assert (keys["x.sizes"].type, keys["x.sizes"].default) == ("a list of integers", "[1, 2]")
    assert ref.undocumented([("x", "", list(keys.values()))]) == ["x.sizes"]


def test_check_fails_on_a_stale_page_and_writing_makes_it_current(ref, tmp_path, monkeypatch):
    page = tmp_path / "configuration.md"
    monkeypatch.setattr(ref, "PAGE", page)
    monkeypatch.setattr(ref, "ROOT", tmp_path)
    assert ref.main(["--check"]) == 1  # no page at all
    page.write_text(ref.render(ref.sections()) + "A line edited by hand.\n")
    assert ref.main(["--check"]) == 1
    assert ref.main([]) == 0
    assert ref.main(["--check"]) == 0
    text = page.read_text()
    assert "| `data.train.src` | a string | required |" in text
    assert "&lt;unk&gt;" in text and "\\| linear" in text  # table-safe cells
