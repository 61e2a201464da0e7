"""YAML in, validated dataclasses out.

Every key has a type; an unknown key, a wrong type or an impossible value is a
UserError that names the key and the file it came from. `--set a.b=value`
overrides are parsed as YAML scalars and checked the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from translator.config.schema import (
    SCHEDULES,
    SPLIT_FILE,
    Config,
    SplitFiles,
)
from translator.errors import UserError
from translator.models import family as families
from translator.models.family import ModelConfig

log = logging.getLogger(__name__)

# PyYAML follows YAML 1.1, which reads 1e-3 and 1.0e3 as strings; accept them as numbers.
_EXP_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


_WORDS = {
    bool: ("true or false", "true/false values"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    str: ("a string", "strings"),
}


def type_words(tp: Any) -> str:
    """A key's type in words, for errors and the configuration reference: "an integer",
    "a list of numbers", "a number or null", "a mapping {src, tgt}, a string or null"."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        words = [type_words(a) for a in typing.get_args(tp)]
        return f"{', '.join(words[:-1])} or {words[-1]}"
    if tp is type(None):
        return "null"
    if origin is list:
        (item,) = typing.get_args(tp)
        return f"a list of {_WORDS[item][1]}" if item in _WORDS else f"a list of {item}"
    if dataclasses.is_dataclass(tp):
        return "a mapping {" + ", ".join(f.name for f in dataclasses.fields(tp)) + "}"
    return _WORDS[tp][0] if tp in _WORDS else str(tp).replace("typing.", "")


def _coerce(value: Any, tp: Any, key: str, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        shaped = [a for a in inner if dataclasses.is_dataclass(a)]
        if not shaped:
            return _coerce(value, inner[0], key, where)
        if isinstance(value, dict):  # a section of its own, e.g. data.train: {src, tgt}
            return _build(shaped[0], value, f"{key}.", where)
        plain = [a for a in inner if a not in shaped]
        if plain and not isinstance(value, list):
            return _coerce(value, plain[0], key, where)
        raise UserError(f"{where}: key '{key}' must be {type_words(tp)}, got {value!r}")
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise UserError(f"{where}: key '{key}' must be a list, got {value!r}")
        return [_coerce(v, item, f"{key}[{i}]", where) for i, v in enumerate(value)]
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, str) and _EXP_FLOAT.fullmatch(value.strip()):
            value = float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    raise UserError(f"{where}: key '{key}' must be {type_words(tp)}, got {value!r}")


def _build(cls: type, raw: Any, prefix: str, where: str) -> Any:
    if not isinstance(raw, dict):
        name = prefix.rstrip(".") or "the top level"
        raise UserError(f"{where}: '{name}' must be a mapping of keys, got {raw!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in raw.items():
        full = f"{prefix}{key}"
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else ""
            raise UserError(f"{where}: unknown key '{full}'{hint}")
        tp = hints[key]
        if tp is ModelConfig:
            kwargs[key] = _build_model(value, f"{full}.", where)
        elif dataclasses.is_dataclass(tp):
            kwargs[key] = _build(tp, value, f"{full}.", where)
        else:
            kwargs[key] = _coerce(value, tp, full, where)
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in kwargs:
            raise UserError(f"{where}: missing key '{prefix}{f.name}'")
    return cls(**kwargs)


def _build_model(raw: Any, prefix: str, where: str) -> ModelConfig:
    """The `model:` section, typed by its family. A key that only other families have is
    ignored (with a warning when it is set to something other than its default there), so
    a config can switch model.type without deleting the other family's keys."""
    if not isinstance(raw, dict):
        raise UserError(f"{where}: '{prefix.rstrip('.')}' must be a mapping of keys, got {raw!r}")
    kind = raw.get("type", families.DEFAULT)
    if kind not in families.names():
        raise UserError(
            f"{where}: key '{prefix}type' must be one of {', '.join(families.names())}, "
            f"got {kind!r}"
        )
    cls = families.config_class(kind)
    own = {f.name for f in dataclasses.fields(cls)}
    others = families.all_keys()
    for key in [k for k in raw if k not in own and k in others]:
        value = raw.pop(key)
        if any(value != _default(families.config_class(f), key) for f in others[key]):
            log.warning(
                "%s: key '%s%s' belongs to model.type %s, not %s; ignored",
                where, prefix, key, " / ".join(others[key]), kind,
            )  # fmt: skip
    return _build(cls, raw, prefix, where)


def _default(cls: type, key: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == key)


def _check(cfg: Config, where: str) -> None:
    def bad(key: str, expected: str) -> UserError:
        section, name = key.split(".") if "." in key else ("", key)
        obj = getattr(cfg, section) if section else cfg
        return UserError(f"{where}: key '{key}' {expected}, got {getattr(obj, name)!r}")

    for key, problem in cfg.model.problems():
        raise bad(f"model.{key}", problem)
    positive = """tokenizer.vocab_size train.max_steps train.batch_tokens train.accumulate train.lr
        train.valid_every train.save_every train.log_every decode.beam decode.batch_size
        train.valid_beam data.max_words""".split()
    for key in positive:
        section, name = key.split(".")
        if getattr(getattr(cfg, section), name) <= 0:
            raise bad(key, "must be greater than 0")
    for key in """train.warmup_steps train.patience train.clip_norm train.weight_decay
        decode.max_len_b decode.max_len_a train.threads train.keep_checkpoints""".split():
        section, name = key.split(".")
        if getattr(getattr(cfg, section), name) < 0:
            raise bad(key, "must not be negative")
    if cfg.data.max_len_ratio is not None and cfg.data.max_len_ratio < 1:
        raise bad("data.max_len_ratio", "must be at least 1 (or null to keep every pair)")
    if cfg.data.workers < 0:
        raise bad("data.workers", "must not be negative")
    if cfg.train.max_minutes is not None and cfg.train.max_minutes <= 0:
        raise bad("train.max_minutes", "must be greater than 0 (or null for no limit)")
    if cfg.train.ema_decay is not None and not 0.0 <= cfg.train.ema_decay < 1.0:
        raise bad("train.ema_decay", "must be in [0, 1) (or null for no moving average)")
    if cfg.train.warmup_share is not None and not 0.0 <= cfg.train.warmup_share < 1.0:
        raise bad("train.warmup_share", "must be in [0, 1) (or null to use train.warmup_steps)")
    for key in ["train.label_smoothing"]:
        section, name = key.split(".")
        if not 0.0 <= getattr(getattr(cfg, section), name) < 1.0:
            raise bad(key, "must be in [0, 1)")
    if cfg.tokenizer.model_type not in ("unigram", "bpe"):
        raise bad("tokenizer.model_type", "must be unigram or bpe")
    if cfg.train.device not in ("auto", "cpu", "cuda", "mps") and not cfg.train.device.startswith(
        "cuda:"
    ):
        raise bad("train.device", "must be auto, cpu, cuda, cuda:N or mps")
    if cfg.train.best_by not in ("bleu", "loss"):
        raise bad("train.best_by", "must be bleu or loss")
    if cfg.train.lr_schedule not in SCHEDULES:
        raise bad("train.lr_schedule", f"must be one of {', '.join(SCHEDULES)}")
    if cfg.train.dtype not in ("auto", "fp32", "bf16", "fp16"):
        raise bad("train.dtype", "must be auto, fp32, bf16 or fp16")
    if len(cfg.train.betas) != 2 or not all(0 <= b < 1 for b in cfg.train.betas):
        raise bad("train.betas", "must be two numbers in [0, 1)")
    if cfg.data.src_lang == cfg.data.tgt_lang:
        raise bad("data.tgt_lang", "must differ from data.src_lang")
    for name in ("train", "dev", "test"):
        files = getattr(cfg.data, name)
        if isinstance(files, str) and not SPLIT_FILE.fullmatch(files.lower()):
            raise bad(
                f"data.{name}",
                "must be a .tsv or .jsonl file (optionally .gz), or {src: PATH, tgt: PATH}",
            )
        for side in ("src", "tgt") if isinstance(files, SplitFiles) else ():
            if not getattr(files, side).strip():
                raise UserError(f"{where}: key 'data.{name}.{side}' must name a file, got ''")


def _apply_override(raw: dict, assignment: str) -> None:
    if "=" not in assignment:
        raise UserError(f"--set '{assignment}': expected KEY=VALUE, e.g. --set train.lr=0.001")
    key, text = assignment.split("=", 1)
    try:
        value = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError:
        value = text
    parts = key.strip().split(".")
    node = raw
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if child is None:  # an unset section (data.test: null) set key by key
            child = node[part] = {}
        if not isinstance(child, dict):
            raise UserError(f"--set '{assignment}': '{part}' is not a section")
        node = child
    node[parts[-1]] = value


def config_from_dict(raw: Any, where: str = "config", overrides: list[str] = ()) -> Config:
    """Validate a plain mapping (from YAML or a checkpoint) into a Config."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UserError(
            f"{where}: expected a mapping of keys at the top level, got {type(raw).__name__}"
        )
    raw = yaml.safe_load(yaml.safe_dump(raw))  # deep copy of plain data
    for assignment in overrides:
        _apply_override(raw, assignment)
    label = where if not overrides else f"{where} (with --set)"
    cfg = _build(Config, raw, "", label)
    _check(cfg, label)
    return cfg


def load_config(path: str | Path, overrides: list[str] = ()) -> Config:
    path = Path(path)
    if path.is_dir():
        raise UserError(f"config file {path} is a folder; give a YAML file, e.g. configs/demo.yaml")
    if not path.is_file():
        raise UserError(f"config file not found: {path}", "the configs/ folder has examples")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise UserError(f"{path}:{line}: not valid YAML: {problem}") from None
    cfg = config_from_dict(raw, str(path), overrides)
    # Every run names its folder: a default one would let a second experiment overwrite the
    # checkpoints of the first.
    given = {a.split("=", 1)[0].strip() for a in overrides}
    if not (isinstance(raw, dict) and "run_dir" in raw) and "run_dir" not in given:
        raise UserError(
            f"{path}: missing required key 'run_dir'",
            "name the folder for this run's checkpoints, e.g. run_dir: runs/my_model",
        )
    return cfg


def save_config(cfg: Config, path: str | Path) -> None:
    from translator.fileio import atomic_write_bytes

    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False, allow_unicode=True)
    try:
        atomic_write_bytes(Path(path), text.encode("utf-8"))
    except OSError as err:
        raise UserError(
            f"cannot write {path}: {err.strerror or err}",
            "check that run_dir is writable and the disk has space",
        ) from None
