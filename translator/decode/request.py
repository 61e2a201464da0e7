"""One call's decoding, as a value: built where a request enters (translate's options, an
HTTP body, training's validation), with its users' texts turned into target ids once, and
handed down to the engine, which keeps no per-call state.

    DecodeRequest(decode, nbest, sampling, source, guides, target_start, alignments)

`decode`: the search settings (beam, length penalty and limits, batch size); `nbest`: the
hypotheses per line; `sampling`: how tokens are drawn instead of searched (None: search);
`source`: the ids put before every source line (the target language's and the corpus's
tags; None: the engine's own, from load_engine); `guides`: per line, the target prefix and
required phrases as ids (decode/guide.py), or None; `target_start`: the ids every output is
forced to begin with and that its text never shows (an imported model's target language
code: engines/lang_codes.py; None: the engine's own). Searches are fed them before the
line's prefix, and the hypotheses come back without them. `alignments`: every hypothesis
comes back with its word alignment (decode/alignment.py), from an engine whose
capabilities say it can.
"""

from __future__ import annotations

import dataclasses
import logging
import weakref
from dataclasses import dataclass
from typing import Any

from translator.config import DecodeConfig
from translator.decode.guide import Guides
from translator.decode.rules import nbest_problem
from translator.decode.sampling import Sampling
from translator.errors import UserError


@dataclass(frozen=True)
class DecodeRequest:
    decode: DecodeConfig
    nbest: int = 1
    sampling: Sampling | None = None
    source: tuple[int, ...] | None = None
    guides: Guides | None = None
    target_start: tuple[int, ...] | None = None
    alignments: bool = False
    confidence: bool = False  # each translation's sentence and word confidence
    min_confidence: float | None = None  # (translate's column: under it, doubtful)

    def __post_init__(self):
        if self.sampling is None and (problem := nbest_problem(self.nbest, self.decode.beam)):
            raise UserError("--" + problem)
        for name in ("source", "target_start"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), tuple):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.guides is not None and self.guides.phrases is not None and self.sampling:
            raise UserError("--constraint needs a search: it does not go with --sampling")

    def replace(self, **changes) -> DecodeRequest:
        return dataclasses.replace(self, **changes)

    def guided(
        self,
        tokenizer,
        lines: list[str],
        steps: int | None,
        prefixes: list[str | None] | None = None,
        constraints: list[list[str]] | None = None,
    ) -> DecodeRequest:
        """This request for `lines`, with each line's target prefix text and required
        phrases read into ids (a UserError names a line whose texts cannot be used);
        `steps`: the model's output limit."""
        guides = Guides.read(tokenizer, lines, steps, self.decode.beam, prefixes, constraints)
        return self.replace(guides=guides)

    def source_or(self, default: tuple[int, ...]) -> tuple[int, ...]:
        """The ids put before every source line: the request's own, else `default` (the
        engine's, from load_engine)."""
        return default if self.source is None else self.source

    def start_or(self, default: tuple[int, ...]) -> tuple[int, ...]:
        """The ids every output is forced to begin with: the request's own, else `default`
        (the engine's, from load_engine)."""
        return default if self.target_start is None else self.target_start

    def rows(self, rows: list[int]) -> DecodeRequest:
        """The request for those lines of it, in that order."""
        return self if self.guides is None else self.replace(guides=self.guides.of(rows))

    @property
    def prefixes(self) -> list[list[int]] | None:
        return None if self.guides is None else self.guides.prefixes

    @property
    def phrases(self) -> list[list[list[int]]] | None:
        return None if self.guides is None else self.guides.phrases


@dataclass(frozen=True)
class Capabilities:
    constraints: bool  # required phrases (--constraint, --terms): the constrained search
    attention: bool  # attention() gives the weights of a search (--plot-attention, /attention)
    streaming: bool  # stream() lets sentences join a running search (serve's continuous mode)
    sampling: bool  # a request's `sampling` draws tokens instead of searching
    alignments: bool = False  # a request's `alignments` gives each hypothesis its word alignment
    confidence: bool = False  # a request's `confidence`: token log-probabilities kept


_SAID: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> keys warned of


def warn_once(engine, key, logger: logging.Logger, message: str) -> None:
    """`message` logged as a warning the first time `engine` meets `key`: what an engine has
    said lives here (it is Frozen), and goes with it."""
    said = _SAID.setdefault(engine, set())
    if key not in said:
        said.add(key)
        logger.warning(message)


class Frozen:
    """Attributes are set by __init__ alone (it ends with `self._frozen = True`): an engine
    is shared by threads and requests, so per-call settings never live on it."""

    _frozen = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise AttributeError(
                f"{type(self).__name__}.{name}: an engine is not changed once built; "
                "put per-call settings in the DecodeRequest"
            )
        super().__setattr__(name, value)


class EngineBase(Frozen):
    """What every engine does alike with a request (engines/engine.py): `cfg`,
    `source_prefix` and `target_start` are its own."""

    target_start: tuple[int, ...] = ()  # (an engine of a model with language codes sets it)
    # code -> id of a model whose languages are codes (engines/lang_codes.py), else None
    language_codes: dict[str, int] | None = None

    def request(self, **given) -> DecodeRequest:
        """A request with the model's own decoding settings, changed by `given`."""
        return DecodeRequest(**{"decode": self.cfg.decode, **given})

    def check_confidence(self, request: DecodeRequest, where: str = "--confidence") -> None:
        """A one-line UserError where `request` asks for confidence this engine cannot give."""
        if request.confidence and not self.capabilities.confidence:
            raise UserError(
                f"{where}: {self.name} keeps no token log-probabilities; use the checkpoint"
            )

    def check_alignments(self, request: DecodeRequest, where: str = "--alignments") -> None:
        """A one-line UserError where `request` asks for alignments this engine cannot give."""
        if request.alignments and not self.capabilities.alignments:
            raise UserError(f"{where}: {self.no_alignments}")

    # why an engine without Capabilities.alignments gives none (its own words)
    no_alignments = "the model has no attention to align words with"
    # why one without Capabilities.attention shows none, and what to serve instead
    no_attention = "it has no attention; serve a Transformer, Bahdanau or Luong model"

    def source_of(self, request: DecodeRequest) -> tuple[int, ...]:
        """The ids put before every source line of `request`."""
        return request.source_or(self.source_prefix)

    def start_of(self, request: DecodeRequest) -> tuple[int, ...]:
        """The ids every output of `request` is forced to begin with, not shown."""
        return request.start_or(self.target_start)


def fed_prefixes(
    start: tuple[int, ...], prefixes: list[list[int]] | None, n: int
) -> list[list[int]] | None:
    """What a search of `n` lines is fed as their target prefixes: `start` before each
    line's own prefix (None where there are neither)."""
    if not start:
        return prefixes
    return [[*start, *p] for p in prefixes or [[] for _ in range(n)]]
