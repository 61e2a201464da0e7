"""What a request may hold, checked before any work is queued, and the worker threads that
do a request's CPU work (tokenizing, glossaries, constraints) off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from translator.data.user_text import valid
from translator.errors import UserError
from translator.serve.limits import LimitError, Limits

# the languages a request may name, alike in every request
TgtLang = Annotated[
    StrictStr | None,
    Field(description="Target language (a model of several; default: the server's)"),
]
SrcLang = Annotated[
    StrictStr | None,
    Field(
        description="Source language (a model of language codes, such as NLLB's; "
        "default: the model's)"
    ),
]


class TranslateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: StrictStr | None = Field(None, description="One sentence (or give `texts`)")
    texts: list[StrictStr] | None = Field(None, description="Several sentences")
    beam: StrictInt | None = Field(None, ge=1, description="Beam size (default: the model's)")
    nbest: StrictInt = Field(1, ge=1, description="Hypotheses per sentence, with scores")
    prefix: StrictStr | None = Field(None, description="Every translation begins with this")
    prefixes: list[StrictStr] | None = Field(
        None, description="Per text of `texts`, what its translation begins with"
    )
    constraints: list[StrictStr] | None = Field(
        None, description="Phrases every translation must hold (a beam above their number)"
    )
    terms: dict[StrictStr, StrictStr] | None = Field(
        None, description="Source term -> target term: a term found in a text is required"
    )
    tgt_lang: TgtLang = None
    src_lang: SrcLang = None
    alignments: StrictBool = Field(
        False,
        description="Also answer `alignments`: per translation, its [source word, translated "
        "word] pairs (whitespace words, from 0)",
    )
    confidence: StrictBool = Field(
        False,
        description="Also answer, per text, `confidence` (the best translation's predicted "
        "chrF / 100 in [0, 1], or exp(mean token log-probability) where the model has no "
        "calibration), `word_confidence` (one probability per whitespace word of the "
        "translation) and `doubtful` (per word: under `confidence_threshold`, the "
        "calibration's, else 0.5), and `confidence_calibrated`; n-best entries get their "
        "own `confidence`",
    )


class AttentionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: StrictStr = Field(description="One sentence")
    beam: StrictInt | None = Field(None, ge=1, description="Beam size (default: the model's)")
    layer: StrictInt = Field(-1, description="Transformer decoder layer (-1: the last)")
    prefix: StrictStr | None = Field(None, description="The translation begins with this")
    tgt_lang: TgtLang = None
    src_lang: SrcLang = None


class ScoreRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sources: list[StrictStr] = Field(description="Source sentences")
    targets: list[StrictStr] = Field(description="Their translations, one per source")
    tgt_lang: TgtLang = None
    src_lang: SrcLang = None


def check_unicode(value, where: str) -> None:
    """A 422 naming the field whose text cannot be encoded (a lone surrogate such as
    "\\ud800" is valid JSON but no character): checked before any work is queued, so such a
    text never reaches a tokenizer that shares a batch with other requests."""
    if isinstance(value, str):
        try:
            valid(value, where)
        except UserError as err:
            raise LimitError(422, err.message) from None
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_unicode(item, f"{where}.{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_unicode(key, f"{where} key")
            check_unicode(item, f"{where}.{key}")


def check_fields(req: BaseModel) -> None:
    for name in type(req).model_fields:
        check_unicode(getattr(req, name), name)


class Cancelled(Exception):
    """Raised by work whose request has timed out (OffLoop.run's `cancelled`)."""


class OffLoop:
    """A request's CPU work on one of a few worker threads, so that the event loop keeps
    answering (/health within milliseconds) however large an allowed request is. At most
    `max_queue` requests wait here (one more is a 429); one that waits past `timeout` is a
    503, and its work is dropped if it has not started, or stops where it checks."""

    def __init__(self, limits: Limits, workers: int = 1):
        # one worker: parsing is Python code under the GIL, so a second would not add speed,
        # only a third thread for the event loop to wait on for the GIL
        self.limits = limits
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="translator-parse")
        self.waiting = 0  # only the event loop's thread changes it

    async def run(self, fn: Callable[..., Any], *args, timeout: float | None = None):
        """fn(*args, cancelled) on a worker thread; `cancelled()` is true once the request
        has timed out, so long work can stop early."""
        if self.waiting >= self.limits.max_queue:
            raise LimitError(
                429, f"the queue is full ({self.limits.max_queue} requests); try again soon"
            )
        gone = threading.Event()
        self.waiting += 1
        future = self.pool.submit(fn, *args, gone.is_set)
        try:
            wait = self.limits.timeout if timeout is None else timeout
            return await asyncio.wait_for(asyncio.wrap_future(future), wait)
        except asyncio.TimeoutError:
            raise self.limits.busy() from None
        finally:
            gone.set()
            future.cancel()  # not started yet: never runs
            self.waiting -= 1
