"""Typed configuration: YAML in, validated dataclasses out.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from translator.errors import UserError
from translator.models import family as families
from translator.models.family import ModelConfig

log = logging.getLogger(__name__)
# Learning-rate schedules (translator/objective.py); named here so reading a config needs no torch.
SCHEDULES = ("inverse_sqrt", "linear", "cosine")
# PyYAML follows YAML 1.1, which reads 1e-3 and 1.0e3 as strings; accept them as numbers.
_EXP_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


@dataclass
class SplitFiles:
    """One split as two line-aligned text files, one sentence a line (optionally .gz)."""

    src: str  # the source-language file
    tgt: str  # the target-language file: its line N translates line N of `src`


# The one-file form of a split: a .tsv or .jsonl file, optionally gzipped.
SPLIT_FILE = re.compile(r".+\.(tsv|jsonl)(\.gz)?")


@dataclass
class DataConfig:
    # Your own files for a split, any names and places (relative paths start at the working
    # directory): {src: PATH, tgt: PATH} or one .tsv/.jsonl PATH; replaces dir/dataset there.
    train: SplitFiles | str | None = None
    # Dev files, as for `train`; needed for training when `train` names files (unless `dir` is set).
    dev: SplitFiles | str | None = None
    # Test files, as for `train`; needed by `translator eval` when `train` names files.
    test: SplitFiles | str | None = None
    # "demo" (built-in generator) or a Hugging Face hub name; `dir` wins when set.
    dataset: str = "demo"
    # A local folder: aligned text files ({split}.{lang}[.gz]), {split}.tsv,
    # {split}.jsonl, or a `datasets` save_to_disk folder.
    dir: str | None = None
    src_lang: str = "de"  # source language code (a column, field or file suffix in the data)
    tgt_lang: str = "en"  # target language code
    train_split: str = "train"  # the training split's name in `dir` or `dataset`
    # The dev split's name in `dir` or `dataset`; "auto" takes the first that exists among
    # the usual names (validation, val, dev, valid).
    dev_split: str = "auto"
    # The test split's name, as for dev_split (test, test_2016_flickr, newstest).
    test_split: str = "auto"
    # Training pairs with more whitespace words than this on either side are dropped.
    max_words: int = 100
    demo_train: int = 12000  # training pairs of the built-in demo corpus
    demo_dev: int = 300  # dev pairs of the demo corpus
    demo_test: int = 300  # test pairs of the demo corpus
    # Hub datasets: read as a stream (`datasets` streaming mode) instead of downloading whole.
    streaming: bool = False
    # Where `translator prepare` writes the tokenized training split (null: the cache,
    # $TRANSLATOR_CACHE/prepared/<key>).
    prepared_dir: str | None = None
    # Drop training pairs whose subword lengths differ by more than this factor (null: keep).
    max_len_ratio: float | None = None
    dedupe: bool = False  # drop training pairs that repeat an earlier pair exactly
    workers: int = 0  # processes that tokenize while preparing; 0 = all cores


@dataclass
class TokenizerConfig:
    vocab_size: int = 8000  # sentencepiece vocabulary size (per side when not joint)
    joint: bool = True  # one vocabulary for both sides (needed for tied src/tgt embeddings)
    model_type: str = "unigram"  # sentencepiece's algorithm: unigram | bpe
    character_coverage: float = 1.0  # share of characters sentencepiece covers (1.0: all)
    byte_fallback: bool = True  # unseen characters become bytes, not <unk>
    max_sentences: int = 2_000_000  # sentencepiece's input_sentence_size


@dataclass
class TrainConfig:
    max_steps: int = 100_000  # optimizer steps at most
    max_minutes: float | None = None  # wall-clock budget; at it: validate, keep best, stop
    batch_tokens: int = 4096  # target+source tokens per batch, padding included
    accumulate: int = 1  # batches per optimizer step
    lr: float = 5e-4  # peak learning rate (AdamW), reached at the end of the warmup
    warmup_steps: int = 4000  # optimizer steps of linear warmup from 0 to `lr`
    # inverse_sqrt (decays forever) | linear | cosine (both reach zero at the run's end: at
    # max_steps, or where the wall-clock budget is expected to run out at the pace so far)
    lr_schedule: str = "inverse_sqrt"
    # linear and cosine: warm up over this share of the planned run (as the decay plans it)
    # instead of warmup_steps, which shapes the warmup until a time budget's first plan; null = off
    warmup_share: float | None = None
    betas: list[float] = field(default_factory=lambda: [0.9, 0.98])  # Adam's beta1, beta2
    weight_decay: float = 0.0  # decoupled weight decay (AdamW); 0 = none
    label_smoothing: float = 0.1  # probability mass spread over the vocabulary in the loss
    clip_norm: float = 1.0  # largest gradient norm (larger ones are scaled down); 0 = no clipping
    valid_every: int = 1000  # optimizer steps between validations
    # what "better" means for best.pt and early stopping: a higher dev BLEU (bleu) or a lower
    # dev loss (loss; steadier than greedy BLEU, which moves by a point between checkpoints)
    best_by: str = "bleu"
    patience: int = 10  # validations without a better dev score before stopping; 0 = never
    save_every: int = 1000  # optimizer steps between last.pt writes
    log_every: int = 25  # optimizer steps between progress reports (training loss, pace)
    device: str = "auto"  # where to train: auto | cpu | cuda | cuda:N | mps
    dtype: str = "auto"  # auto | fp32 | bf16 | fp16
    threads: int = 0  # CPU threads for torch; 0 = all cores
    compile: bool = False  # torch.compile the model for training (the Transformer gains most)
    valid_beam: int = 1  # beam used for dev BLEU during training
    # Step-numbered checkpoints (RUN/step-NNNNNN.pt, weights only) kept at each save_every for
    # `translator average`; 0 = none.
    keep_checkpoints: int = 0
    # Decay of an exponential moving average of the weights, which validation scores and
    # best.pt holds; null or 0 = off.
    ema_decay: float | None = None
    tensorboard: bool = False  # scalars to RUN/tensorboard/ (the `tensorboard` extra)


@dataclass
class DecodeConfig:
    beam: int = 5  # beam size; 1 = greedy search
    len_penalty: float = 1.0  # GNMT alpha in ((5 + len) / 6) ** alpha
    max_len_a: float = 1.5  # longest output: max_len_a * source subwords + max_len_b
    max_len_b: int = 10  # subwords added to the output length limit (see max_len_a)
    batch_size: int = 64  # sentences per decoding batch
    allow_unk: bool = False  # let search output <unk> (never <pad> or <bos>)


@dataclass
class Config:
    # The run's folder: checkpoints, logs, summary; required in a config file.
    run_dir: str = "runs/demo"
    seed: int = 1  # seeds python, numpy and torch, and the data order
    data: DataConfig = field(default_factory=DataConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    # The typed section of the family model.type (translator/models/family.py).
    model: ModelConfig = field(default_factory=families.model_config)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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
