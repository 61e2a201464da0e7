"""Several training corpora (data.corpora) as one: each prepared on its own, their pairs
seen as one set of rows, each epoch drawn from them by weight, and a corpus's tag put in
front of its sources as the batches are cut.

Corpus c holds the rows bases[c] .. bases[c + 1] - 1. An epoch holds as many pairs as all
corpora together; corpus c gives round(total * weight_c / sum of weights) of them: its
rows repeated as many whole times as that fits and a random subset for the rest, so a small
in-domain set is seen several times an epoch and a large crawl in part. The draw depends
on (seed, epoch) alone, so a resumed run sees the same epochs.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

import numpy as np
import torch

from translator.config import Config, CorpusConfig, DataConfig, SplitFiles
from translator.config.languages import (
    check_target,
    direction_name,
    directions,
    lang_prefix,
    languages,
)
from translator.data.batching import Batch, PairIds, TokenBatches
from translator.data.corpus import Source, open_base, open_source, with_own_files
from translator.data.multilingual import joint_tokenizer, wait_for_tokenizer
from translator.data.prepare import Prepared, prepare, wait_for_prepared
from translator.data.readers import MissingLanguage, check_split_files
from translator.data.tokenizer import Tokenizer
from translator.errors import UserError
from translator.specials import PAD

log = logging.getLogger(__name__)


def corpus_data(corpus: CorpusConfig, data: DataConfig) -> DataConfig:
    """The data section as one corpus of data.corpora sees it: its own languages, with the
    dev and test of that direction."""
    return data.replace(
        corpora=None, directions=None,
        src_lang=corpus.src_lang or data.src_lang, tgt_lang=corpus.tgt_lang or data.tgt_lang,
    )  # fmt: skip


def open_corpus(corpus: CorpusConfig, data: DataConfig, seed: int, key: str) -> Source:
    """The training split of one of data.corpora (`key`: data.corpora[N], as errors name
    it), with the dev and test of its direction; its missing files are named now."""
    data = corpus_data(corpus, data)
    # dev and test: data.dev and data.test, or the folder or dataset data names; the demo,
    # unless named, never fills them in (data.dev unset is an error, as with data.train)
    named = data.dir is not None or "dataset" in data.model_fields_set
    if not named or data.dataset == "none":
        main = with_own_files(data, [n for n in ("dev", "test") if getattr(data, n)], None)
    else:
        main = open_source(data, seed)
    if corpus.train is not None:
        check_split_files(corpus.train, f"{key}.train")
        own = with_own_files(data.replace(train=corpus.train), ["train"], None, key)
    else:  # only its training split is looked for: a corpus folder needs no dev or test
        skip = SplitFiles(src="", tgt="")
        sub = data.replace(
            train=None, dev=skip, test=skip, dir=corpus.dir,
            dataset=corpus.dataset or data.dataset, train_split=corpus.train_split,
            streaming=corpus.streaming,
        )  # fmt: skip
        own = open_base(sub, seed)
    streams = {"train": own.streams["train"], "dev": main.streams["dev"]}
    if "test" in main.streams:  # (a folder may hold none: eval then says so)
        streams["test"] = main.streams["test"]
    prints = {"train": own.fingerprint, "dev": main.fingerprint}
    return Source(own.label("train"), streams, prints, {"dev": main.label("dev")})


def training_sources(cfg: Config) -> list[tuple[str, Source]]:
    """(name, Source) of each training corpus the config names."""
    corpora = cfg.data.training_corpora()
    if not corpora:
        return [("train", open_source(cfg.data, cfg.seed))]
    with languages_named(cfg.data):
        return [
            (f"train{i}", open_corpus(corpus, cfg.data, cfg.seed, f"data.corpora[{i}]"))
            for i, corpus in enumerate(corpora)
        ]


@contextmanager
def languages_named(data: DataConfig):
    """A language the data lacks, named where the config sets it: the direction of
    data.directions, or the data.corpora entry's own src_lang/tgt_lang, which the corpus's
    data section (corpus_data) carries as data.src_lang/tgt_lang."""
    try:
        yield
    except MissingLanguage as err:
        for i, corpus in enumerate(data.training_corpora() or []):
            if getattr(corpus, err.key) != err.lang:
                continue  # (None: the data section's own key, which the error names)
            if data.directions:
                raise UserError(
                    f"data.directions: {data.directions[i]}: language '{err.lang}' is not in "
                    f"{err.where}; languages found: {err.found}"
                ) from None
            raise UserError(
                f"data.corpora[{i}].{err.key} is '{err.lang}' but {err.where} does not hold "
                f"that language; languages found: {err.found}"
            ) from None
        raise


def corpus_name(cfg: Config, i: int) -> str:
    """How logs and errors name training corpus i."""
    if cfg.data.directions:
        return f"data.directions[{i}] ({cfg.data.directions[i]})"
    return f"data.corpora[{i}]"


def prepare_corpora(cfg: Config, tokenizer: Tokenizer | None, wait: bool) -> list[Prepared]:
    """Each training corpus prepared on its own (or, with `wait`, mapped once another
    process has). The first one's pairs train the subword model, with the tags as pieces of
    their own, so that adding or dropping another corpus leaves it and the others as they
    are; the others are prepared with it. Corpora of several languages share one subword
    model trained on all of them, each language sampled alike (data/multilingual.py)."""
    with languages_named(cfg.data):
        return _prepare_corpora(cfg, tokenizer, wait)


def _prepare_corpora(cfg: Config, tokenizer: Tokenizer | None, wait: bool) -> list[Prepared]:
    symbols = cfg.data.tags
    corpora = cfg.data.training_corpora()
    sources = []
    for i, corpus in enumerate(corpora):
        source = open_corpus(corpus, cfg.data, cfg.seed, f"data.corpora[{i}]")
        source.description = f"{corpus_name(cfg, i)} ({source.description})"
        own = corpus_data(corpus, cfg.data)
        sources.append((source, own.src_lang, own.tgt_lang))
    if tokenizer is None and len(languages(cfg.data)) > 2:
        train = wait_for_tokenizer if wait else joint_tokenizer
        tokenizer = train(cfg, sources, symbols)
    out: list[Prepared] = []
    for source, _, _ in sources:
        given = tokenizer if not out else out[0].tokenizer
        first = symbols if not out else ()
        if wait:
            out.append(wait_for_prepared(cfg, given, source, first))
        else:
            out.append(prepare(cfg, given, source, first))
    return out


def dev_sets(cfg: Config, first: Prepared, prepared: list[Prepared] | None) -> list[tuple]:
    """(direction name or None, dev pairs, source prefix ids) of each direction validation
    scores: one per direction of a model of several, else the data's one dev set."""
    if prepared is None or len(directions(cfg.data)) == 1:
        return [(None, first.dev, [])]
    out, seen = [], set()
    for corpus, part in zip(cfg.data.training_corpora(), prepared):
        own = corpus_data(corpus, cfg.data)
        if (own.src_lang, own.tgt_lang) in seen:
            continue
        seen.add((own.src_lang, own.tgt_lang))
        prefix = lang_prefix(first.tokenizer, cfg.data, own.tgt_lang, "data.directions")
        out.append((direction_name(own.src_lang, own.tgt_lang), part.dev, prefix))
    return out


def source_prefixes(cfg: Config, tokenizer: Tokenizer) -> list[list[int]]:
    """The ids each training corpus puts before its sources: the target-language tag (with
    several target languages), then the corpus's own tag."""
    out = []
    for i, corpus in enumerate(cfg.data.training_corpora()):
        own = corpus_data(corpus, cfg.data)
        tags = [t for t in (check_target(cfg.data, own.tgt_lang), corpus.tag) if t is not None]
        ids = tokenizer.tag_ids(tags)[0]
        if len(ids) != len(tags):
            raise UserError(
                f"{corpus_name(cfg, i)}: tags {', '.join(tags)} are not all pieces of the "
                "subword model (one trained without them, as the model --init-from gives)",
                "drop the tag, or train a new model: its subword model holds every tag",
            )
        out.append(ids)
    return out


def mixed_batches(cfg: Config, prepared: list[Prepared], limit: int, drawn) -> TokenBatches:
    """The batches of all corpora, each epoch drawn by weight, sources tagged; `drawn(ids,
    tokenizer)`: a corpus's ids as training reads them (subword sampling, data/subwords.py)."""
    tokenizer = prepared[0].tokenizer
    prefixes = source_prefixes(cfg, tokenizer)
    ids = MixedIds([drawn(p.ids, tokenizer) for p in prepared], prefixes)
    rows = ids.within(limit)
    if rows is not None:
        log.info(f"dropped {len(ids) - len(rows)} pairs over model.max_positions={limit}")
    weights = [c.weight for c in cfg.data.training_corpora()]
    draw = WeightedDraw(ids, weights, cfg.seed, rows, cfg.data.temperature)
    shares = "; ".join(
        f"{corpus_name(cfg, i)}: {len(r)} pairs, {100 * s:.1f}% of each epoch"
        for i, (r, s) in enumerate(zip(draw.rows, draw.shares()))
    )
    log.info(f"{len(prepared)} corpora: {shares}")
    return TokenBatches(ids, None, cfg.train.batch_tokens, cfg.seed, rows=rows, draw=draw)


class MixedIds(PairIds):
    """The pairs of several PairIds as one, with each corpus's source prefix (tag ids)
    counted in its sources' lengths and put first when a batch is cut."""

    def __init__(self, parts: list[PairIds], prefixes: list[list[int]]):
        self.parts, self.prefixes = parts, [list(p) for p in prefixes]
        self.maps = tuple(m for p in parts for m in p.maps)
        self.bases = np.cumsum([0] + [len(p) for p in parts])
        costs = []
        for part, prefix in zip(parts, self.prefixes):
            if not prefix:
                costs.append(np.asarray(part.cost))
            else:  # the tags make each source longer
                s, t = part.lengths(np.arange(len(part)))
                costs.append(np.maximum(s + len(prefix), t - 1).astype(np.int32))
        self.cost = np.concatenate(costs) if costs else np.zeros(0, np.int32)

    def _split(self, rows) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(corpus, positions in `rows`, rows within the corpus) for each corpus in `rows`."""
        rows = np.asarray(rows, dtype=np.int64)
        which = np.searchsorted(self.bases, rows, side="right") - 1
        out = []
        for c in np.unique(which):
            at = np.nonzero(which == c)[0]
            out.append((int(c), at, rows[at] - self.bases[c]))
        return out

    def lengths(self, rows) -> tuple[np.ndarray, np.ndarray]:
        rows = np.asarray(rows, dtype=np.int64)
        src, tgt = np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64)
        for c, at, local in self._split(rows):
            s, t = self.parts[c].lengths(local)
            src[at], tgt[at] = s + len(self.prefixes[c]), t
        return src, tgt

    def release(self) -> None:
        for part in self.parts:
            part.release()

    @property
    def redraws(self) -> bool:
        return any(part.redraws for part in self.parts)

    def draw(self, rows, key: tuple = ()) -> tuple[list[list[int]], list[list[int]]]:
        """The rows' ids in their order, each corpus's drawn with its own key; a tagged
        corpus's sources start with its tags."""
        src: list = [None] * len(rows)
        tgt: list = [None] * len(rows)
        for c, at, local in self._split(rows):
            s, t = self.parts[c].draw(local, (*key, c))
            prefix = self.prefixes[c]
            for i, a, b in zip(at.tolist(), s, t):
                src[i], tgt[i] = prefix + a, b
        return src, tgt

    def collate(self, rows, key: tuple = ()) -> Batch:
        """The rows as one batch, grouped by corpus (order within a batch does not matter
        to training); a tagged corpus's sources begin with its tag ids."""
        pieces = []
        for c, _, local in self._split(rows):
            batch = self.parts[c].collate(local, (*key, c))
            if self.prefixes[c]:
                tag = torch.tensor(self.prefixes[c], dtype=batch.src.dtype)
                batch.src = torch.cat([tag.expand(batch.src.size(0), -1), batch.src], 1)
            pieces.append(batch)
        if len(pieces) == 1:
            return pieces[0]

        def stack(tensors):
            width = max(t.size(1) for t in tensors)
            return torch.cat([torch.nn.functional.pad(t, (0, width - t.size(1)), value=PAD)
                              for t in tensors])  # fmt: skip

        return Batch(
            stack([b.src for b in pieces]),
            stack([b.tgt_in for b in pieces]),
            stack([b.tgt_out for b in pieces]),
            sum(b.n_tokens for b in pieces),
        )


class WeightedDraw:
    """Each epoch's rows of a MixedIds, drawn by weight (module docstring); `allowed`: the
    rows that may be drawn (e.g. those within model.max_positions), None for all."""

    def __init__(
        self, ids: MixedIds, weights: list[float], seed: int, allowed=None, temperature=None
    ):
        self.seed = seed
        rows = np.arange(len(ids)) if allowed is None else np.asarray(allowed, dtype=np.int64)
        which = np.searchsorted(ids.bases, rows, side="right") - 1
        self.rows = [rows[which == c] for c in range(len(ids.parts))]
        if temperature is not None:  # p_c ~ weight_c * n_c^(1/T) (data.temperature)
            weights = [w * len(r) ** (1 / temperature) for w, r in zip(weights, self.rows)]
        total, weight = len(rows), float(sum(weights))
        # Largest remainders: the quotas add up to the epoch's length exactly.
        exact = [total * w / weight for w in weights]
        self.quota = [int(q) for q in exact]
        by_rest = sorted(range(len(exact)), key=lambda c: self.quota[c] - exact[c])
        for c in by_rest[: total - sum(self.quota)]:
            self.quota[c] += 1
        for c, (mine, quota) in enumerate(zip(self.rows, self.quota)):
            if quota and not len(mine):
                raise UserError(
                    f"data.corpora[{c}]: none of its pairs is within model.max_positions"
                )

    def __call__(self, epoch: int) -> np.ndarray:
        rng = np.random.Generator(np.random.PCG64([self.seed % 2**63, epoch, 1]))
        drawn = []
        for mine, quota in zip(self.rows, self.quota):
            whole, rest = divmod(quota, len(mine)) if len(mine) else (0, 0)
            drawn.append(np.tile(mine, whole))
            drawn.append(np.sort(rng.choice(mine, rest, replace=False)))
        return np.concatenate(drawn)

    def shares(self) -> list[float]:
        """Each corpus's share of an epoch's pairs."""
        total = sum(self.quota)
        return [q / total for q in self.quota]
