"""The interface every engine offers: the PyTorch translator (decode/translator.py, one
model or an ensemble) and the CTranslate2 translator (engines/ct2.py). Commands and the
server open one with `load_engine` (engines/load.py) and use nothing else.

An engine is built once and never changed: what one call asks for travels in its
DecodeRequest (decode/request.py). What an engine can do beyond translating and scoring is
declared in its `capabilities`, never inferred from its name or class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from translator.config import Config
from translator.data.tokenizer import Tokenizer
from translator.decode.request import Capabilities, DecodeRequest, Frozen  # noqa: F401 (re-exported)
from translator.decode.score import Score
from translator.decode.translator import Translation


class SentenceStream(Protocol):
    """A beam search that sentences join between its steps (Capabilities.streaming)."""

    def add(self, texts: list[str], owners: list[Any], request: DecodeRequest) -> list[int]:
        """Queue the texts that are not blank, one owner each; the indices of those queued."""
        ...

    def step(self) -> list[tuple[Any, list[Translation]]]:
        """Advance every sentence by one token: (owner, n-best translations) of those that
        ended."""
        ...

    def owners(self) -> Iterator[Any]:
        """The owners of the sentences being decoded or waiting to join."""
        ...

    def __len__(self) -> int: ...


@runtime_checkable
class Engine(Protocol):
    cfg: Config  # the model's config; cfg.decode holds the default decoding settings
    tokenizer: Tokenizer
    max_source: int  # source subwords the model takes; a longer line is cut
    max_target: int  # target subwords (with <eos>) the model outputs at most
    source_prefix: tuple[int, ...]  # ids before every line of a request that names none
    target_start: tuple[int, ...]  # forced, unshown first output ids of such a request
    language_codes: dict[str, int] | None  # a model of language codes: each one's id
    attention_layers: int  # decoder layers attention() can show
    capabilities: Capabilities

    def translate(
        self, lines: list[str], request: DecodeRequest | None = None, progress: bool = False
    ) -> list[list[Translation]]:
        """Per line, its request.nbest best Translation, in input order (None: the model's
        own decoding settings). `progress`: True shows a bar of batches; a caller's bar
        (tqdm's interface) is advanced by each batch's lines instead."""
        ...

    def score(
        self,
        sources: list[str],
        targets: list[str],
        request: DecodeRequest | None = None,
        progress: bool = False,
    ) -> list[Score]:
        """Per aligned pair, the log-probability of the target given the source, as a search
        would add it up (its batches of request.decode.batch_size); in input order."""
        ...

    def attention(self, line: str, request: DecodeRequest | None = None, layer: int = -1) -> tuple:
        """(best Translation, source pieces, target pieces, [target, source] weights) of
        `line`, the weights from the search that translated it (beginning with the request's
        target prefix, if it has one). Capabilities.attention."""
        ...

    def attention_label(self, layer: int) -> str:
        """What `layer`'s weights are, for a picture's title."""
        ...

    def stream(
        self,
        request: DecodeRequest,
        capacity: int,
        cancelled: Callable[[Any], bool],
        nbest_of: Callable[[Any], int],
    ) -> SentenceStream:
        """A search of `request`'s beam that up to `capacity` sentences join as others end;
        `cancelled(owner)`: nobody waits for that owner's sentences any more; `nbest_of
        (owner)`: the translations it wants of each sentence. Capabilities.streaming."""
        ...

    def describe(self) -> dict:
        """What the engine is: family, engine, parameters, device, languages, beam,
        attention (its weights shown), alignments (words aligned from them): the facts
        `serve` reports at /health and /info."""
        ...
