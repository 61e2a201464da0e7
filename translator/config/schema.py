"""The typed configuration: one pydantic model per section, every key with its type, default
and a comment (docs/configuration.md is generated from them)."""

from __future__ import annotations

import re
import typing
from typing import Annotated, Literal

from annotated_types import Ge, Gt, Le
from pydantic import Field

from translator.config.base import (
    ModelConfig,
    NonNegative,
    NonNegativeNumber,
    Positive,
    PositiveNumber,
    Probability,
    Section,
    Text,
)
from translator.config.languages import lang_tags
from translator.config.ranges import BATCH_SIZE, BEAM, LEN_PENALTY, MAX_LEN_A, MAX_LEN_B, SEED
from translator.models import family as families

# Learning-rate schedules (translator/train/schedule.py); named here so reading a config needs no torch.
Schedule = Literal["inverse_sqrt", "linear", "cosine"]
SCHEDULES = typing.get_args(Schedule)

# Numbers with both ends: the decoding settings and the seed as the command line takes them
# (translator/config/ranges.py); corpus weights and time budgets small enough that sums of them and
# products with them stay finite.
Beam = Annotated[int, Ge(BEAM[0]), Le(BEAM[1])]
LenPenalty = Annotated[float, Ge(LEN_PENALTY[0]), Le(LEN_PENALTY[1])]
MaxLenA = Annotated[float, Ge(MAX_LEN_A[0]), Le(MAX_LEN_A[1])]
MaxLenB = Annotated[int, Ge(MAX_LEN_B[0]), Le(MAX_LEN_B[1])]
BatchSize = Annotated[int, Ge(BATCH_SIZE[0]), Le(BATCH_SIZE[1])]
Seed = Annotated[int, Ge(SEED[0]), Le(SEED[1])]
Weight = Annotated[float, Gt(0), Le(1e6)]
Minutes = Annotated[float, Gt(0), Le(1e6)]  # about two years


class SplitFiles(Section):
    """One split as two line-aligned text files, one sentence a line (optionally .gz)."""

    src: Text  # the source-language file
    tgt: Text  # the target-language file: its line N translates line N of `src`


# The one-file form of a split: a .tsv or .jsonl file, optionally gzipped.
SPLIT_FILE = re.compile(r".+\.(tsv|jsonl)(\.gz)?")


class CorpusConfig(Section):
    """One training corpus of several (data.corpora): where its pairs come from, as the data
    section says it for one corpus (exactly one of train, dir, dataset), and its share."""

    # Its files: {src: PATH, tgt: PATH} or one .tsv/.jsonl PATH.
    train: SplitFiles | Text | None = None
    # A folder in any layout data.dir reads; its train_split is used.
    dir: Text | None = None
    dataset: Text | None = None  # a Hugging Face hub dataset (or a local one); its train_split
    train_split: Text = "train"  # the split to read in `dir` or `dataset`
    streaming: bool = False  # read a hub dataset as a stream
    # Its share of each epoch's pairs, relative to the others' weights: an epoch holds as many
    # pairs as all corpora together, drawn from each by weight (a small set is repeated, a
    # large one sampled), deterministically from the seed.
    weight: Weight = 1.0
    # A symbol put before each of its sources, e.g. "<bt>" for back-translated pairs: a piece
    # of its own in the vocabulary, never split or produced; translate --tag gives it.
    tag: Text | None = None
    # Its source language, where it differs from data.src_lang: a folder or dataset of
    # several languages (Multi30k's de, en, fr, cs) gives one direction per entry.
    src_lang: Text | None = None
    tgt_lang: Text | None = None  # its target language, where it differs from data.tgt_lang


class DataConfig(Section):
    # Your own files for a split, any names and places (relative paths start at the working
    # directory): {src: PATH, tgt: PATH} or one .tsv/.jsonl PATH; replaces dir/dataset there.
    train: SplitFiles | Text | None = None
    # Dev files, as for `train`; needed for training when `train` names files (unless `dir` is set).
    dev: SplitFiles | Text | None = None
    # Test files, as for `train`; needed by `translator eval` when `train` names files.
    test: SplitFiles | Text | None = None
    # Several training corpora mixed by weight, each {train | dir | dataset, weight, tag}
    # (data.corpora[].* below); replaces the training split of train/dir/dataset, which
    # still give dev and test. The subword model is trained on the first corpus (on all of
    # them, each language sampled alike, when they span several languages).
    corpora: list[CorpusConfig] | None = None
    # One model for several directions, e.g. [en-de, en-fr, en-cs]: each read from `dir` or
    # `dataset` (train, dev and test of its own languages), mixed as data.corpora entries
    # of weight 1 are, validated one by one; with several target languages a tag <2xx>
    # before each source asks for language xx (translate --tgt-lang). Replaces
    # src_lang/tgt_lang, and data.corpora, whose entries can name src_lang/tgt_lang instead.
    directions: list[Text] | None = None
    # Temperature sampling across corpora: corpus c's share of an epoch goes as
    # weight_c * pairs_c ** (1 / T); 1 follows the corpus sizes, 5 is usual for many
    # languages (small ones are seen more often than their size alone gives). null: the
    # shares follow the weights alone. From 0.1: pairs_c ** 10 is as far as floats reach.
    temperature: Annotated[float, Ge(0.1), Le(1000)] | None = None
    # "demo" (built-in generator), a Hugging Face hub name, or "none" (an imported model's:
    # commands that need data ask for files); `dir` wins when set.
    dataset: Text = "demo"
    # A local folder: aligned text files ({split}.{lang}[.gz]), {split}.tsv,
    # {split}.jsonl, or a `datasets` save_to_disk folder.
    dir: Text | None = None
    src_lang: Text = "de"  # source language code (a column, field or file suffix in the data)
    tgt_lang: Text = "en"  # target language code
    train_split: Text = "train"  # the training split's name in `dir` or `dataset`
    # The dev split's name in `dir` or `dataset`; "auto" takes the first that exists among
    # the usual names (validation, val, dev, valid).
    dev_split: Text = "auto"
    # The test split's name, as for dev_split (test, test_2016_flickr, newstest).
    test_split: Text = "auto"
    # Training pairs with more whitespace words than this on either side are dropped.
    max_words: Positive = 100
    demo_train: Positive = 12000  # training pairs of the built-in demo corpus
    demo_dev: Positive = 300  # dev pairs of the demo corpus
    demo_test: Positive = 300  # test pairs of the demo corpus
    # Hub datasets: read as a stream (`datasets` streaming mode) instead of downloading whole.
    streaming: bool = False
    # Where `translator prepare` writes the tokenized training split (null: the cache,
    # $TRANSLATOR_CACHE/prepared/<key>).
    prepared_dir: Text | None = None
    # Drop training pairs whose subword lengths differ by more than this factor (null: keep).
    max_len_ratio: Annotated[float, Ge(1)] | None = None
    dedupe: bool = False  # drop training pairs that repeat an earlier pair exactly
    workers: NonNegative = 0  # processes that tokenize while preparing; 0 = all cores

    def training_corpora(self) -> list[CorpusConfig] | None:
        """The training corpora: data.corpora, or one per entry of data.directions, or None
        (the data section's own training split)."""
        if not self.directions:
            return self.corpora
        where = {"dir": self.dir} if self.dir is not None else {"dataset": self.dataset}
        out = []
        for name in self.directions:
            src, tgt = name.split("-", 1)
            out.append(CorpusConfig(**where, train_split=self.train_split,
                                    streaming=self.streaming, src_lang=src, tgt_lang=tgt))  # fmt: skip
        return out

    @property
    def corpus_tags(self) -> list[str]:
        """The corpus tags, each once, in the order data.corpora names them: what --tag takes."""
        tags = (c.tag for c in self.training_corpora() or [] if c.tag is not None)
        return list(dict.fromkeys(tags))

    @property
    def tags(self) -> list[str]:
        """The source tags in use, each once: the corpus tags, then the target-language tags
        of a model with several target languages."""
        return list(dict.fromkeys([*self.corpus_tags, *lang_tags(self)]))


class TokenizerConfig(Section):
    vocab_size: Positive = 8000  # sentencepiece vocabulary size (per side when not joint)
    joint: bool = True  # one vocabulary for both sides (needed for tied src/tgt embeddings)
    model_type: Literal["unigram", "bpe"] = "unigram"  # sentencepiece's algorithm
    # The share of characters sentencepiece covers (1.0: all).
    character_coverage: Annotated[float, Gt(0), Le(1)] = 1.0
    byte_fallback: bool = True  # unseen characters become bytes, not <unk>
    max_sentences: Positive = 2_000_000  # sentencepiece's input_sentence_size
    # Subword regularization of the training pairs, drawn afresh for every batch: unigram
    # models sample a segmentation (Kudo 2018; this is the smoothing alpha, lower = more
    # varied, 0.1 to 0.5 is usual), bpe models drop merges with this probability (BPE-dropout,
    # 0.1 is usual). Dev, test and translation keep the one best segmentation. null = off.
    sampling_alpha: Annotated[float, Gt(0), Le(1)] | None = None

    def model_keys(self) -> dict:
        """The keys the subword model is trained from (sampling only changes its use)."""
        keys = self.to_dict()
        keys.pop("sampling_alpha")
        return keys


class TrainConfig(Section):
    max_steps: Positive = 100_000  # optimizer steps at most
    max_minutes: Minutes | None = None  # wall-clock budget; at it: validate, keep best, stop
    batch_tokens: Positive = 4096  # rows x the longer side of each batch, padding included
    accumulate: Positive = 1  # batches per optimizer step
    lr: PositiveNumber = 5e-4  # peak learning rate (AdamW), reached at the end of the warmup
    warmup_steps: NonNegative = 4000  # optimizer steps of linear warmup from 0 to `lr`
    # inverse_sqrt (decays forever) | linear | cosine (both reach zero at the run's end: at
    # max_steps, or where the wall-clock budget is expected to run out at the pace so far)
    lr_schedule: Schedule = "inverse_sqrt"
    # linear and cosine: warm up over this share of the planned run (as the decay plans it)
    # instead of warmup_steps, which shapes the warmup until a time budget's first plan; null = off
    # (inverse_sqrt ignores it, with a warning)
    warmup_share: Probability | None = None
    betas: list[Probability] = Field(default_factory=lambda: [0.9, 0.98])  # Adam's beta1, beta2
    weight_decay: NonNegativeNumber = 0.0  # decoupled weight decay (AdamW); 0 = none
    # Late dropout (Liu et al. 2023): no dropout for the first N epochs, then the model's
    # rates; a run of few epochs underfits rather than overfits. 0 = dropout from the start.
    dropout_after_epochs: NonNegative = 0
    label_smoothing: Probability = 0.1  # probability mass spread over the vocabulary in the loss
    # Guided alignment (Garg et al. 2019): the weight of a cross-entropy between the attention
    # of the Transformer's head model.alignment_head (of model.alignment_layer) and word
    # alignments of the training pairs made by eflomal (computed once, cached with the
    # prepared data; the `align` extra), added to the loss; 0.05 is usual; 0 = off.
    guided_alignment: Annotated[float, Ge(0), Le(100)] = 0.0
    # The largest gradient norm (larger ones are scaled down); 0 = no clipping.
    clip_norm: NonNegativeNumber = 1.0
    valid_every: Positive = 1000  # optimizer steps between validations
    # what "better" means for best.pt and early stopping: a higher dev BLEU (bleu) or a lower
    # dev loss (loss; steadier than greedy BLEU, which moves by a point between checkpoints)
    best_by: Literal["bleu", "loss"] = "bleu"
    patience: NonNegative = 10  # validations without a better dev score before stopping; 0 = never
    save_every: Positive = 1000  # optimizer steps between last.pt writes
    log_every: Positive = 25  # optimizer steps between progress reports (training loss, pace)
    device: Text = "auto"  # where to train: auto | cpu | cuda | cuda:N | mps
    # What training computes in; auto: bf16 where the CPU or GPU has it natively (a GPU
    # without it: fp16), else fp32.
    dtype: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    threads: NonNegative = 0  # CPU threads for torch; 0 = all cores
    compile: bool = False  # torch.compile the model for training (the Transformer gains most)
    # The Transformer's attention in training: fused (PyTorch's flash or memory-efficient
    # kernel) or products (two batched matrix products and a float32 softmax, which
    # compiling fuses); the same results up to rounding.
    attention: Literal["fused", "products"] = "fused"
    valid_beam: Beam = 1  # beam used for dev BLEU during training
    # Step-numbered checkpoints (RUN/step-NNNNNN.pt, weights only) kept at each save_every for
    # `translator average`; 0 = none.
    keep_checkpoints: NonNegative = 0
    # Decay of an exponential moving average of the weights, which validation scores and
    # best.pt holds; null or 0 = off.
    ema_decay: Probability | None = None
    tensorboard: bool = False  # scalars to RUN/tensorboard/ (the `tensorboard` extra)


class DecodeConfig(Section):
    beam: Beam = 5  # beam size; 1 = greedy search
    len_penalty: LenPenalty = 1.0  # alpha of the length normalisation (len_norm); 0 = none
    # What a finished hypothesis's log-probability is divided by (len: its tokens with the
    # </s>): gnmt, ((5 + len) / 6) ** alpha (Wu et al. 2016; OpenNMT's wu), or power, len **
    # alpha (transformers' length_penalty, Marian's --normalize, CTranslate2's; alpha 1 = the
    # mean per token).
    len_norm: Literal["gnmt", "power"] = "gnmt"
    max_len_a: MaxLenA = 1.5  # longest output: max_len_a * source subwords + max_len_b
    max_len_b: MaxLenB = 10  # subwords added to the output length limit (see max_len_a)
    batch_size: BatchSize = 64  # sentences per decoding batch
    allow_unk: bool = False  # let search output <unk> (never <pad> or <bos>)


class Config(Section):
    # The run's folder: checkpoints, logs, summary; required in a config file.
    run_dir: Text = "runs/demo"
    seed: Seed = 1  # seeds python, numpy and torch, and the data order
    data: DataConfig = Field(default_factory=DataConfig)
    tokenizer: TokenizerConfig = Field(default_factory=TokenizerConfig)
    # The typed section of the family model.type (translator/models/family.py).
    model: ModelConfig = Field(default_factory=lambda: families.config_class(families.DEFAULT)())
    train: TrainConfig = Field(default_factory=TrainConfig)
    decode: DecodeConfig = Field(default_factory=DecodeConfig)
