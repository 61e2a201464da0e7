"""The interface every engine offers: the PyTorch translator (decode/translator.py, one
model or an ensemble) and the CTranslate2 translator (engines/ct2.py). `translate`,
`eval` and `serve` open one with `load_engine` (engines/load.py) and use nothing else."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from translator.config import Config, DecodeConfig


@runtime_checkable
class Engine(Protocol):
    cfg: Config  # the model's config; cfg.decode holds the default decoding settings
    tokenizer: Any  # data.tokenizer.Tokenizer
    max_source: int  # source subwords the model takes; a longer line is cut
    attention_layers: int  # decoder layers attention() can show; 0: it raises a UserError
    supports_streaming: bool  # serve's continuous batching can step its search
    prefix: list[int]  # source ids put before every line: a corpus tag's (translate --tag)
    sampling: Any  # decode.sampling.Sampling to sample instead of searching; None: search

    def translate(
        self,
        lines: list[str],
        decode_cfg: DecodeConfig | None = None,
        nbest: int = 1,
        progress: bool = False,
        prefixes: list[str | None] | None = None,
    ) -> list[list[Any]]:
        """Per line, its `nbest` best decode.translator.Translation, in input order; with
        `prefixes`, each translation begins with its line's prefix text (None: none)."""
        ...

    def score(
        self,
        sources: list[str],
        targets: list[str],
        batch_size: int | None = None,
        progress: bool = False,
    ) -> list[Any]:
        """Per aligned pair, its decode.score.Score: the log-probability of the target given
        the source, as a search would add it up; in input order."""
        ...

    def attention(
        self,
        line: str,
        decode_cfg: DecodeConfig | None = None,
        layer: int = -1,
        prefix: list[int] | None = None,
    ) -> tuple:
        """(best Translation, source pieces, target pieces, [target, source] weights) of
        `line`, the weights from the search that translated it (beginning with the target
        ids `prefix`, if given)."""
        ...

    def attention_label(self, layer: int) -> str:
        """What `layer`'s weights are, for a picture's title (engines with attention)."""
        ...

    def describe(self) -> dict:
        """What the engine is: family, engine, parameters, device, languages, beam,
        attention (the facts `serve` reports at /health and /info)."""
        ...
