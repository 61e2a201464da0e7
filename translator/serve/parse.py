"""A request's body turned into the work it asks for: plain functions, run off the event
loop (their tokenizing and glossary matching are CPU work), that either return the
request's values (its texts and its DecodeRequest, with prefixes and phrases read into ids
once) or raise the client's error: a LimitError (its status) or a UserError (400).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from translator.config import DecodeConfig
from translator.data.user_text import blank, phrase
from translator.decode.line_guides import Terms
from translator.decode.request import DecodeRequest
from translator.decode.rules import nbest_problem, phrases_problem
from translator.engines.load import starts
from translator.serve.limits import LimitError, Limits
from translator.serve.requests import (
    AttentionRequest,
    Cancelled,
    ScoreRequest,
    TranslateRequest,
    check_fields,
)


@dataclass(frozen=True)
class Door:
    """What checking a request needs of the server: the engine, the limits, the decoding
    settings of a request that names none, and the server's corpus tag and default target
    language."""

    engine: object  # engines.engine.Engine
    limits: Limits
    decode: DecodeConfig
    tag: str | None = None
    tgt_lang: str | None = None

    def starts_of(self, lang: str | None, src_lang: str | None = None) -> dict:
        """The DecodeRequest fields of a request for `lang` (the server's default when None)
        from `src_lang` (the model's default when None): `source`, the ids put before each
        source (its language tag, then the corpus tag, as load_engine orders them), and for
        a model of language codes (engines/lang_codes.py) the source language's code there
        and `target_start`, `lang`'s code, which every output begins with unseen. A missing
        or unknown language is a UserError (400) listing the model's."""
        engine = self.engine
        prefix, start = starts(engine.cfg, engine.tokenizer, engine.language_codes, self.tag,
                               lang or self.tgt_lang, src_lang=src_lang, option="tgt_lang")  # fmt: skip
        return {"source": tuple(prefix), "target_start": start}

    def beam_of(self, beam: int | None, nbest: int) -> int:
        given = beam is not None or nbest <= self.decode.beam  # (else nbest sets the beam)
        if beam is None:
            beam = max(self.decode.beam, nbest)
        elif problem := nbest_problem(nbest, beam):
            raise LimitError(422, problem)
        if beam > self.limits.max_beam:
            asked = f"beam {beam}" if given else f"nbest {nbest} (a beam of {nbest})"
            raise LimitError(422, f"{asked} is over this server's limit of {self.limits.max_beam}")
        return beam

    def check_texts(self, texts: list[str], one: str = "text", many: str = "texts") -> None:
        """A 413 where a request holds more `texts` (or prefixes, or phrases: `one` and
        `many` name them) than --max-texts, or one longer than --max-chars."""
        limits = self.limits
        if len(texts) > limits.max_texts:
            raise LimitError(
                413, f"{len(texts)} {many} in one request; the limit is {limits.max_texts}"
            )
        for i, text in enumerate(texts):
            if len(text) > limits.max_chars:
                raise LimitError(
                    413, f"{one} {i} has {len(text)} characters; the limit is {limits.max_chars}"
                )


def check_subwords(engine, texts: list[str], prefix, what: str = "text", target=False) -> None:
    """A 413 naming the first text the model would have to cut: what it was asked to
    translate or score is never dropped without the client knowing. `prefix`: the ids put
    before each source; `target`: the texts are targets, of the decoder's steps."""
    limit = engine.max_target if target else engine.max_source
    if limit is None:  # (a recurrent model reads and writes sequences of any length)
        return
    limit += target  # (<bos> is not a step)
    tokenizer = engine.tokenizer
    ids = tokenizer.encode_tgt(texts) if target else tokenizer.encode_src(texts)
    for i, one in enumerate(ids):
        if len(prefix) + len(one) > limit:
            raise LimitError(413, f"{what} {i} is {len(prefix) + len(one)} subwords; the model "
                                  f"takes at most {limit}: split it into sentences")  # fmt: skip


def prefixes_of(door: Door, req: TranslateRequest, texts: list[str]) -> list[str] | None:
    """Each text's target prefix text, or None where none has one."""
    if req.prefix is not None and req.prefixes is not None:
        raise LimitError(422, 'give "prefix" (for every text) or "prefixes", not both')
    if req.prefixes is not None and len(req.prefixes) != len(texts):
        raise LimitError(
            422, f"{len(req.prefixes)} prefixes for {len(texts)} texts: give one per text"
        )
    if req.prefix is not None:  # one for every text must say something, as --prefix must
        phrase(req.prefix, "prefix")
    given = [req.prefix] * len(texts) if req.prefix is not None else req.prefixes
    if given is None or not any(given):
        return None
    door.check_texts(given, "prefix", "prefixes")
    return given


def constraints_of(
    door: Door, req: TranslateRequest, texts: list[str], cancelled: Callable[[], bool]
) -> list[list[str]] | None:
    """Each text's required phrases: `constraints` and the `terms` found in it (a large
    glossary takes seconds: it stops once its request has timed out)."""
    limits = door.limits
    if req.terms and len(req.terms) > limits.max_terms:
        raise LimitError(
            413, f"terms: {len(req.terms)} in one request; the limit is {limits.max_terms}"
        )
    glossary = Terms(list(req.terms.items())) if req.terms else None
    musts = [list(req.constraints or []) for _ in texts]
    if glossary is not None:
        for given, text in zip(musts, texts):
            if cancelled():
                raise Cancelled
            glossary.add_found(given, text)
    if not any(musts):
        return None
    if not door.engine.capabilities.constraints:
        raise LimitError(400, "an exported (CTranslate2) model cannot require phrases")
    door.check_texts([p for given in musts for p in given], "required phrase", "required phrases")
    return musts


def check_beam_holds(door: Door, musts: list[list[str]] | None, beam: int) -> None:
    """A 422 naming the request's `beam` where a text has more required phrases than the
    beam keeps apart (k - 1 for a beam of k); the search's own check (decode/guide.py)
    names the command line's --beam."""
    for i, given in enumerate(musts or []):
        if problem := phrases_problem(len(given), beam):
            most = door.limits.max_beam
            fix = (f'set "beam" to {len(given) + 1} or more' if len(given) < most
                   else f"this server's beam limit is {most}: give fewer phrases")  # fmt: skip
            raise LimitError(422, f"text {i}: {problem}: {fix}")


def parse_translate(
    door: Door, req: TranslateRequest, cancelled: Callable[[], bool]
) -> tuple[list[str], DecodeRequest]:
    """The texts of a translate request and how to decode them, checked."""
    check_fields(req)
    if (req.text is None) == (req.texts is None):
        raise LimitError(422, 'give either "text" (a string) or "texts" (a list of strings)')
    texts = [req.text] if req.text is not None else req.texts
    door.check_texts(texts)
    starts = door.starts_of(req.tgt_lang, req.src_lang)
    beam = door.beam_of(req.beam, req.nbest)
    prefixes = prefixes_of(door, req, texts)
    if cancelled():
        raise Cancelled
    musts = constraints_of(door, req, texts, cancelled)
    check_beam_holds(door, musts, beam)
    for i in range(len(texts)):  # what an output must hold bounds its search as a text does
        need = len(prefixes[i] if prefixes else "") + sum(map(len, musts[i] if musts else []))
        if need > door.limits.max_chars:
            raise LimitError(413, f"text {i}: its prefix and required phrases hold {need} "
                                  f"characters; the limit is {door.limits.max_chars}")  # fmt: skip
    engine = door.engine
    if req.alignments and not engine.capabilities.alignments:
        raise LimitError(400, f"alignments: {engine.no_alignments}")
    if req.confidence and not engine.capabilities.confidence:
        raise LimitError(400, "confidence: the served model keeps no token log-probabilities")
    request = DecodeRequest(
        door.decode.replace(beam=beam), req.nbest, alignments=req.alignments,
        confidence=req.confidence, **starts,
    )  # fmt: skip
    check_subwords(engine, texts, engine.source_of(request))
    if prefixes is not None or musts is not None:  # a UserError (400) names the text
        request = request.guided(engine.tokenizer, texts, engine.max_target, prefixes, musts)
    return texts, request


def parse_score(door: Door, req: ScoreRequest, cancelled: Callable[[], bool]) -> DecodeRequest:
    check_fields(req)
    if len(req.sources) != len(req.targets):
        raise LimitError(
            422, f"{len(req.sources)} sources but {len(req.targets)} targets: give one each"
        )
    door.check_texts(req.sources)
    door.check_texts(req.targets)
    request = DecodeRequest(door.decode, **door.starts_of(req.tgt_lang, req.src_lang))
    engine = door.engine
    check_subwords(engine, req.sources, engine.source_of(request), "source")
    check_subwords(engine, req.targets, engine.start_of(request), "target", target=True)
    return request


def parse_attention(
    door: Door, req: AttentionRequest, cancelled: Callable[[], bool]
) -> DecodeRequest:
    """How to decode an attention request's one text, checked."""
    check_fields(req)
    engine = door.engine
    if not engine.capabilities.attention:
        raise LimitError(
            400,
            f"the served {engine.cfg.model.type} model has no attention weights to show: "
            f"{engine.no_attention}",
        )
    door.check_texts([req.text])
    layers = engine.attention_layers
    if not -layers <= req.layer < layers:
        raise LimitError(422, f"layer {req.layer}: the model has {layers} (0..{layers - 1}, or -1)")
    if blank(req.text):
        raise LimitError(422, "text: an empty sentence has no attention to show")
    starts = door.starts_of(req.tgt_lang, req.src_lang)
    beam = door.beam_of(req.beam, 1)
    request = DecodeRequest(door.decode.replace(beam=beam), **starts)
    check_subwords(engine, [req.text], engine.source_of(request))
    if req.prefix:
        door.check_texts([req.prefix])
        request = request.guided(engine.tokenizer, [req.text], engine.max_target, [req.prefix])
    return request
