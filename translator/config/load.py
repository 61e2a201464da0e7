"""YAML in, validated config out.

pydantic checks every key's type, range and choices (schema.py); an unknown key, a wrong
type or an impossible value becomes a UserError that names the key and the file it came
from. `--set a.b=value` overrides (overrides.py) are checked the same way.
"""

from __future__ import annotations

import difflib
import logging
import re
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from translator.config.base import ModelConfig, Section
from translator.config.languages import directions
from translator.config.overrides import KeyProblem, apply_override
from translator.config.schema import SPLIT_FILE, Config, SplitFiles
from translator.config.shapes import hints, members, shape
from translator.config.words import as_written, type_words
from translator.errors import UserError
from translator.models import family as families
from translator.specials import SPECIAL_PIECES

log = logging.getLogger(__name__)


class _Loader(yaml.SafeLoader):
    """YAML 1.1 as PyYAML reads it, but 1e-3 and 1.0e3 are numbers, as in YAML 1.2, and a
    key given twice in one mapping is an error (PyYAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
            if not isinstance(key_node, yaml.ScalarNode):  # a list or mapping hashes to nothing
                kind = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
                raise KeyProblem(
                    None, None, f"a key must be a name, got {kind}", key_node.start_mark
                )
            key = key_node.value
            if key in seen and key_node.tag == "tag:yaml.org,2002:str":
                raise KeyProblem(
                    None, None, f"key '{key}' is given twice (first on line {seen[key] + 1})",
                    key_node.start_mark,
                )  # fmt: skip
            seen.setdefault(key, key_node.start_mark.line)
        return super().construct_mapping(node, deep)


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


def read_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader)


def _message(err: dict, cls: type, prefix: str, where: str) -> tuple[int, str]:
    """One pydantic error as (preference, one line): the key as the user wrote it, what it
    must be, and the value. An error inside a mapping a union allows (data.train: {src, tgt})
    is preferred over the union's other members failing on that mapping."""
    names, tp, section, rank = [], None, cls, 1
    parts = list(err["loc"])
    while parts:
        part = parts.pop(0)
        if tp is None:  # `part` is a key of `section`
            keys = hints(section)
            if part not in keys:
                close = difflib.get_close_matches(str(part), list(keys), n=1)
                key = ".".join(names + [str(part)])
                hint = f"; did you mean '{prefix}{'.'.join(names + [close[0]])}'?" if close else ""
                return -1, f"{where}: unknown key '{prefix}{key}'{hint}"
            names.append(str(part))
            tp = keys[part]
        elif isinstance(part, int):  # an item of a list
            names[-1] += f"[{part}]"
            listed = next(m for m in members(tp) if typing.get_origin(m) is list)
            tp = typing.get_args(listed)[0]
        else:  # the member of a union that was tried
            member = next((m for m in members(tp) if getattr(m, "__name__", "") == part), None)
            if member is None or not parts:
                break
            tp, section, rank = None, member, 0
            continue
        if tp is not None and isinstance(tp, type) and issubclass(tp, Section) and parts:
            section, tp = tp, None
    key = prefix + ".".join(names)
    if err["type"] == "missing":
        return rank, f"{where}: missing key '{key}'"
    if tp is None or (isinstance(tp, type) and issubclass(tp, Section)):  # not a mapping
        return rank, f"{where}: '{key}' must be a mapping of keys, got {as_written(err['input'])}"
    finite = " (finite)" if err["type"] == "finite_number" else ""
    return (
        rank,
        f"{where}: key '{key}' must be {type_words(tp)}{finite}, got {as_written(err['input'])}",
    )


def _build(cls: type, raw: Any, prefix: str, where: str) -> Any:
    if not isinstance(raw, dict):
        name = prefix.rstrip(".") or "the top level"
        raise UserError(f"{where}: '{name}' must be a mapping of keys, got {as_written(raw)}")
    try:
        return cls.model_validate(raw)
    except ValidationError as err:
        found = [_message(e, cls, prefix, where) for e in err.errors()]
        raise UserError(min(found, key=lambda f: f[0])[1]) from None


def section_with(section: Section, changes: dict, where: str) -> Any:
    """A copy of `section` with `changes`, checked as a config file's keys are: an unknown
    key or a bad value is a UserError naming `where` and the key."""
    return _build(type(section), {**section.to_dict(), **changes}, "", where)


def _build_model(raw: Any, prefix: str, where: str) -> ModelConfig:
    """The `model:` section, typed by its family. A key that only other families have is
    ignored with a warning, so a config can switch model.type without deleting the other
    family's keys."""
    if not isinstance(raw, dict):
        raise UserError(
            f"{where}: '{prefix.rstrip('.')}' must be a mapping of keys, got {as_written(raw)}"
        )
    kind = raw.get("type", families.DEFAULT)
    if kind not in families.names():
        raise UserError(
            f"{where}: key '{prefix}type' must be one of {', '.join(families.names())}, "
            f"got {as_written(kind)}"
        )
    cls = families.config_class(kind)
    others = families.all_keys()
    # A section that holds every family's keys (the flat layout some checkpoints carry) was
    # written whole, not chosen key by key: it loads quietly.
    flat = set(others) <= set(raw)
    for key in [k for k in raw if k not in cls.model_fields and k in others]:
        raw.pop(key)
        if not flat:
            log.warning(
                "%s: key '%s%s' belongs to model.type %s, not %s; ignored",
                where, prefix, key, " / ".join(others[key]), kind,
            )  # fmt: skip
    return _build(cls, raw, prefix, where)


def _check(cfg: Config, where: str) -> None:
    """What the types alone cannot say: combinations of keys and the shapes of strings."""

    def bad(key: str, expected: str) -> UserError:
        section, name = key.split(".") if "." in key else ("", key)
        obj = getattr(cfg, section) if section else cfg
        return UserError(f"{where}: key '{key}' {expected}, got {as_written(getattr(obj, name))}")

    for key, problem in cfg.model.problems():
        raise bad(f"model.{key}", problem)
    if cfg.train.attention != "fused" and cfg.model.type != "transformer":
        log.warning("%s: key 'train.attention' is the Transformer's; model.type %s ignores it",
                    where, cfg.model.type)  # fmt: skip
    if cfg.train.warmup_share is not None and cfg.train.lr_schedule == "inverse_sqrt":
        log.warning("%s: key 'train.warmup_share' belongs to train.lr_schedule linear / cosine; "
                    "inverse_sqrt ignores it", where)  # fmt: skip
    device = cfg.train.device
    if device not in ("auto", "cpu", "cuda", "mps") and not re.fullmatch(r"cuda:\d+", device):
        raise bad("train.device", "must be auto, cpu, cuda, cuda:N or mps")
    if len(cfg.train.betas) != 2:
        raise bad("train.betas", "must be two numbers in [0, 1)")
    if cfg.data.src_lang == cfg.data.tgt_lang:
        raise bad("data.tgt_lang", "must differ from data.src_lang")
    splits = [(f"data.{name}", getattr(cfg.data, name)) for name in ("train", "dev", "test")]
    for i, corpus in enumerate(cfg.data.corpora or []):
        splits.append((f"data.corpora[{i}].train", corpus.train))
    for key, files in splits:
        if isinstance(files, str) and not SPLIT_FILE.fullmatch(files.lower()):
            raise UserError(
                f"{where}: key '{key}' must be a .tsv or .jsonl file (optionally .gz), or "
                f"{{src: PATH, tgt: PATH}}, got {as_written(files)}"
            )
        for side in ("src", "tgt") if isinstance(files, SplitFiles) else ():
            name = getattr(files, side)
            if not name.strip():
                got = as_written(name)
                raise UserError(f"{where}: key '{key}.{side}' must name a file, got {got}")
    _check_directions(cfg, where)
    _check_corpora(cfg.data, where)
    for src, tgt in directions(cfg.data):
        if src == tgt:
            raise UserError(f"{where}: a corpus translates {src} into {tgt}; give two languages")
    if len(directions(cfg.data)) > 1 and not cfg.tokenizer.joint:
        raise bad("tokenizer.joint", "must be true for several directions (one vocabulary for "
                  "all languages)")  # fmt: skip


def _check_directions(cfg: Config, where: str) -> None:
    data = cfg.data
    if data.directions is None:
        return
    _listed(data.directions, "data.directions", where)
    if data.corpora is not None:
        raise UserError(f"{where}: data.directions and data.corpora both give training data; "
                        "give data.corpora entries src_lang and tgt_lang instead")  # fmt: skip
    if data.train is not None or (data.dir is None and data.dataset == "demo"):
        raise UserError(
            f"{where}: data.directions reads each direction from data.dir or data.dataset "
            "(files named by language); set one of them"
        )
    for name in data.directions:
        src, _, tgt = name.partition("-")
        if not src or not tgt or src == tgt or "-" in tgt:
            raise UserError(
                f"{where}: key 'data.directions' takes SRC-TGT entries such as en-de, got {name!r}"
            )
    if len(set(data.directions)) < len(data.directions):
        raise UserError(f"{where}: key 'data.directions' names a direction twice")


def _listed(items: list, key: str, where: str) -> None:
    if not items:
        raise UserError(f"{where}: key '{key}' lists none; list some, or set it null")


def _check_corpora(data, where: str) -> None:
    if data.corpora is None:
        return
    _listed(data.corpora, "data.corpora", where)
    if data.train is not None:
        raise UserError(
            f"{where}: data.train and data.corpora both give training data; "
            "put the data.train files into data.corpora as one more corpus"
        )
    for i, corpus in enumerate(data.corpora):
        given = [k for k in ("train", "dir", "dataset") if getattr(corpus, k) is not None]
        if len(given) != 1:
            raise UserError(
                f"{where}: data.corpora[{i}] must give exactly one of train, dir or dataset, "
                f"got {', '.join(given) or 'none'}"
            )
    tags = sorted({c.tag for c in data.corpora if c.tag is not None})
    for tag in tags:
        if not tag or any(ch.isspace() for ch in tag):
            raise UserError(f"{where}: tag {tag!r} must be one word, e.g. <bt>")
        if tag in SPECIAL_PIECES:
            raise UserError(f"{where}: tag {tag!r} is a special piece of the vocabulary")
        # sentencepiece matches user symbols in text greedily: one inside another is ambiguous
        for other in tags:
            if other != tag and tag in other:
                raise UserError(f"{where}: tags {tag!r} and {other!r} collide: one holds the other")


def config_from_dict(raw: Any, where: str = "config", overrides: list[str] = ()) -> Config:
    """Validate a plain mapping (from YAML or a checkpoint) into a Config."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UserError(
            f"{where}: expected a mapping of keys at the top level, got {type(raw).__name__}"
        )
    given, raw = raw, read_yaml(yaml.safe_dump(raw))  # a deep copy of plain data
    for assignment in overrides:
        apply_override(raw, assignment, read_yaml, shape)
    if not overrides:
        return _validated(raw, where)
    label = f"{where} (with --set)"
    try:
        return _validated(raw, label)
    except UserError as err:
        try:  # a mistake the file (or checkpoint) makes itself is named as its own
            _validated(read_yaml(yaml.safe_dump(given)), where)
        except UserError as own:
            if own.message == err.message.replace(label, where, 1):
                raise own from None
        raise


def _named_keys(raw: Any) -> Any:
    """`raw` with each key that YAML read as something else than a string (null, true, a
    date) spelt as the file spells it, so that an unknown key is named as it was written."""
    if isinstance(raw, dict):
        return {k if isinstance(k, str) else as_written(k): _named_keys(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [_named_keys(item) for item in raw]
    return raw


def _validated(raw: dict, label: str) -> Config:
    raw = _named_keys(raw)
    if "model" in raw:  # typed by its family first, so its errors name model.<key>
        raw["model"] = _build_model(raw["model"], "model.", label)
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
        text = path.read_text(encoding="utf-8")
        raw = read_yaml(text)
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    except yaml.YAMLError as err:
        raise UserError(f"{path}:{_yaml_problem(err, max(1, len(text.splitlines())))}") from None
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


def _yaml_problem(err, lines: int) -> str:
    """Where a YAML error is and what it is, as ` line N: not valid YAML: WHAT (while
    parsing X from line M)`; a problem at the end of the file (an unclosed bracket) is put
    on the file's last line."""

    def line(mark) -> int:
        return min(mark.line + 1, lines)

    mark, context = getattr(err, "problem_mark", None), getattr(err, "context_mark", None)
    where = f" line {line(mark)}" if mark is not None else ""
    said = f"{where}: not valid YAML: {getattr(err, 'problem', None) or 'invalid YAML'}"
    if context is not None and getattr(err, "context", None):
        said += f" ({err.context} from line {line(context)})"
    return said


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
