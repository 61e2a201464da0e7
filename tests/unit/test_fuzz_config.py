"""Property-based tests of the config loader: every key with values of every kind (numbers
not finite or huge among them), from a YAML file or `--set`, loads or is refused with one
line that names the key; what loads holds only finite numbers in their stated ranges."""

from __future__ import annotations

import math

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from util import fuzz_examples, tiny_config

from translator.config import Config, config_from_dict, flatten, load_config
from translator.errors import UserError

# every key of the schema as `section.key` (a family's model keys: the default family's)
KEYS = sorted(flatten(Config().to_dict()))

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 0.5, 2**31, 2**32, 2**63, 1e308, True, None, "", "x", [], {}]),
    st.text(max_size=6),
)
yaml_scalars = st.sampled_from(
    [".inf", "-.inf", ".nan", ".NaN", "1e400", "1e-400", "0x1F", "0o7", "1_000", "~", "[]", "{}"]
)


def with_value(doc: dict, key: str, value) -> dict:
    """`doc` with `key` (section.key) set to `value`."""
    *sections, name = key.split(".")
    node = doc
    for section in sections:
        if not isinstance(node.get(section), dict):
            node[section] = {}
        node = node[section]
    node[name] = value
    return doc


def loads_or_one_line(load, *args) -> Config | None:
    try:
        cfg = load(*args)
    except UserError as err:
        assert "\n" not in str(err) and str(err).strip()
        return None
    for key, value in flatten(cfg.to_dict()).items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
    return cfg


@settings(max_examples=fuzz_examples(60))
@given(changes=st.lists(st.tuples(st.sampled_from(KEYS), values), min_size=1, max_size=3))
def test_any_values_of_any_keys_load_or_name_the_key(changes):
    doc = tiny_config(run_dir="runs/x")
    for key, value in changes:
        doc = with_value(doc, key, value)
    cfg = loads_or_one_line(config_from_dict, doc, "cfg.yaml")
    if cfg is None:
        return
    assert cfg.decode.max_len_a <= 1000 and -10 <= cfg.decode.len_penalty <= 10
    assert 0 <= cfg.seed < 2**32


@settings(max_examples=fuzz_examples(40))
@given(key=st.sampled_from(KEYS), text=st.one_of(yaml_scalars, st.text(max_size=8)))
def test_set_overrides_of_any_text_load_or_name_the_key(key, text):
    loads_or_one_line(config_from_dict, tiny_config(), "cfg.yaml", [f"{key}={text}"])


@settings(max_examples=fuzz_examples(30))
@given(key=st.sampled_from(KEYS), text=yaml_scalars)
def test_yaml_files_with_odd_numbers_load_or_name_the_file(tmp_path, key, text):
    doc = with_value(tiny_config(run_dir="runs/x"), key, "PLACEHOLDER")
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(doc).replace("PLACEHOLDER", text))
    try:
        load_config(path)
    except UserError as err:
        assert "\n" not in str(err) and str(path) in str(err)
