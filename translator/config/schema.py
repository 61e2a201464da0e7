"""The typed configuration: one dataclass per section, every key with its type, default
and a comment (docs/configuration.md is generated from them)."""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from translator.models import family as families
from translator.models.family import ModelConfig

log = logging.getLogger(__name__)
# Learning-rate schedules (translator/train/schedule.py); named here so reading a config needs no torch.
SCHEDULES = ("inverse_sqrt", "linear", "cosine")


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
