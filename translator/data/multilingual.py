"""One subword model for the corpora of several languages (data.directions, or data.corpora
entries with their own languages).

Each language gets the same number of sentences in the sample sentencepiece learns from, so
that a large language does not crowd a small one out of the vocabulary: a language's
sentences from every corpus that holds it, each once (en→de and en→fr share their English
side in a many-way parallel corpus), then sampled down to that number, or repeated whole
times up to it when it has fewer. The number is the largest language's count, at most
tokenizer.max_sentences shared among the languages.
"""

from __future__ import annotations

import logging
import random
import time

from translator.config import Config
from translator.data.clean import clean_pairs
from translator.data.corpus import Source
from translator.data.tokenizer import Tokenizer, cached_model_path, train_cached
from translator.errors import UserError

log = logging.getLogger(__name__)


def language_sample(cfg: Config, sources: list[tuple[Source, str, str]]) -> dict[str, list[str]]:
    """language -> its sentences for sentencepiece; `sources`: (corpus, src_lang, tgt_lang)."""
    from translator.data.prepare import check_tags, reservoir

    langs = list(dict.fromkeys(lang for _, s, t in sources for lang in (s, t)))
    quota = max(1, cfg.tokenizer.max_sentences // len(langs))
    found: dict[str, dict[str, None]] = {lang: {} for lang in langs}
    for source, src_lang, tgt_lang in sources:
        pairs, _ = clean_pairs(reservoir(source, quota, cfg.seed), cfg.data.max_words)
        check_tags(pairs, cfg.data.tags, source.description, cfg.data.corpus_tags)
        for src, tgt in pairs:
            found[src_lang][src] = None
            found[tgt_lang][tgt] = None
    empty = [lang for lang in langs if not found[lang]]
    if empty:
        raise UserError(f"no training sentences in {', '.join(empty)} after cleaning")
    size = min(quota, max(len(s) for s in found.values()))
    rng, out = random.Random(cfg.seed), {}
    for lang in langs:
        mine = list(found[lang])
        whole, rest = divmod(size, len(mine))
        out[lang] = mine * whole + rng.sample(mine, rest)
    counts = ", ".join(f"{lang} {len(set(out[lang]))}" for lang in langs)
    log.info(f"subword sample: {size} sentences per language (distinct: {counts})")
    return out


def _sentences(cfg: Config, sources) -> list[str]:
    return [s for sentences in language_sample(cfg, sources).values() for s in sentences]


def joint_tokenizer(cfg: Config, sources, symbols) -> Tokenizer:
    """The joint subword model of all the corpora's languages, with `symbols` as pieces."""
    return Tokenizer(train_cached(_sentences(cfg, sources), cfg.tokenizer, cfg.seed, symbols))


def wait_for_tokenizer(cfg: Config, sources, symbols, poll: float = 0.5) -> Tokenizer:
    """For the processes that do not prepare: the joint model once another one trained it."""
    path = cached_model_path(_sentences(cfg, sources), cfg.tokenizer, cfg.seed, symbols)
    while not path.is_file():
        time.sleep(poll)
    return Tokenizer(path.read_bytes())
