"""translator as a library: `load` opens a model once (a checkpoint, an export folder, or
several checkpoints as an ensemble), and its Model translates, scores and translates
documents with the command line's decoding settings given per call. Each call builds its
own DecodeRequest, so one Model serves many threads with different settings at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from translator.errors import UserError

Texts = str | list[str]
# what translate and hypotheses take that a document, one best translation a sentence, does not
LINE_SETTINGS = {"nbest", "alignments", "confidence", "sampling", "temperature", "seed",
                 "prefix", "constraints", "terms"}  # fmt: skip


def load(
    model: str | os.PathLike | list,
    device: str = "auto",
    quantize: str | None = None,
    tag: str | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
) -> Model:
    """The model at `model`: a checkpoint file, a folder from `translator export`, or a list
    of checkpoints decoded as one ensemble. `quantize`: "int8" on the CPU; `tag`: a corpus
    tag put before every source; `src_lang`, `tgt_lang`: the languages of calls that name
    none (a model of several target languages needs one, here or per call)."""
    from translator.engines.load import load_engine

    paths = list(model) if isinstance(model, (list, tuple)) else [model]
    if not paths:
        raise UserError("load(): give a checkpoint, an export folder or a list of checkpoints")
    for path in paths:
        if not Path(path).exists():
            raise UserError(f"load(): {path}: no such checkpoint or export folder", "a released "
                            "model is imported first: translator import SOURCE --output CKPT")  # fmt: skip
    engine = load_engine([Path(p) for p in paths], device, quantize, ensemble=len(paths) > 1,
                         tag=tag, any_language=True)  # fmt: skip
    return Model(engine, tag, src_lang, tgt_lang)


class Model:
    """An opened model. Its `engine` (engines/engine.py) is shared and never changed; the
    keyword settings of each call are that call's alone."""

    def __init__(self, engine, tag: str | None, src_lang: str | None, tgt_lang: str | None):
        self.engine = engine
        self._tag, self._src_lang, self._tgt_lang = tag, src_lang, tgt_lang
        self._request(decode={})  # a model of several targets without tgt_lang fails here

    def __repr__(self) -> str:
        info = self.info
        return f"Model({info['family']}, {info['engine']}, {'-'.join(info['languages'])})"

    @property
    def info(self) -> dict:
        """What the model is: family, engine, parameters, device, languages, beam."""
        return self.engine.describe()

    def translate(self, text: Texts, progress: bool = False, **settings: Any) -> Texts:
        """The best translation of `text`, or of each text of a list. `settings`: beam,
        len_penalty, max_len_a, max_len_b, batch_size; sampling ("topk:K" or "topp:P"),
        temperature, seed; prefix (a text, or one per text), constraints (phrases, or a
        list of phrases per text), terms (a {source term: target term} glossary);
        src_lang, tgt_lang."""
        found = self.hypotheses(text, progress=progress, **settings)
        return found[0].text if isinstance(text, str) else [hyps[0].text for hyps in found]

    def hypotheses(
        self,
        text: Texts,
        nbest: int = 1,
        alignments: bool = False,
        confidence: bool = False,
        progress: bool = False,
        **settings: Any,
    ) -> list:
        """The `nbest` best Translations (text, score, tokens, and where asked, alignment
        and confidence) of `text`, or a list of them per text of a list. `settings` as for
        translate."""
        lines = _lines(text)
        request = self._request(nbest=nbest, alignments=alignments, confidence=confidence,
                                **settings)  # fmt: skip
        request = _guided(self.engine, request, lines, settings)
        found = self.engine.translate(lines, request, progress=progress) if lines else []
        return found[0] if isinstance(text, str) else found

    def score(self, source: Texts, target: Texts, **languages: str | None):
        """The Score (log-probability, tokens, mean) of `target` given `source`, or a list
        of them for aligned lists; `languages`: src_lang, tgt_lang."""
        sources, targets = _lines(source), _lines(target, "target")
        if isinstance(source, str) != isinstance(target, str) or len(sources) != len(targets):
            raise UserError(
                f"score(): {len(sources)} sources and {len(targets)} targets; give one "
                "text each, or aligned lists of the same length"
            )
        request = self._request(**languages)
        scores = self.engine.score(sources, targets, request) if sources else []
        return scores[0] if isinstance(source, str) else scores

    def translate_document(
        self, document: str | bytes | os.PathLike, format: str | None = None, **settings: Any
    ) -> str | bytes:
        """`document` translated with its markup: a text (returned as text), the bytes of
        a file, or a file's path (both returned as bytes). `format`: html, markdown, docx or
        text (paragraphs); a path's extension names it where not given. `settings`: beam,
        len_penalty, max_len_a, max_len_b, batch_size, src_lang, tgt_lang."""
        from translator.commands.translate_document import engine_translate
        from translator.documents import format_of, translate_bytes

        if isinstance(document, (str, bytes)):
            name, data = Path("document"), document
            if format is None:
                raise UserError("translate_document(): give format= html, markdown, docx or text")
        else:
            name = Path(document)
            data = name.read_bytes() if name.is_file() else None
            if data is None:
                raise UserError(f"{name}: no such file")
        fmt = format_of(name, format) or "text"
        if lines_only := sorted(set(settings) & LINE_SETTINGS):
            raise UserError(f"translate_document() takes no {', '.join(lines_only)}: a "
                            "document gets one best translation a sentence")  # fmt: skip
        request = self._request(**settings)
        translate = engine_translate(self.engine, request)
        cfg = self.engine.cfg.data
        source = settings.get("src_lang") or self._src_lang or getattr(cfg, "src_lang", None)
        target = settings.get("tgt_lang") or self._tgt_lang or getattr(cfg, "tgt_lang", None)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        out = translate_bytes(raw, name, fmt, translate, source, target)
        return out.decode("utf-8") if isinstance(document, str) else out

    def _request(self, nbest: int = 1, alignments: bool = False, confidence: bool = False,
                 src_lang: str | None = None, tgt_lang: str | None = None, decode=None,
                 sampling: str | None = None, temperature: float | None = None,
                 seed: int | None = None, prefix=None, constraints=None, terms=None,
                 **changes):  # fmt: skip
        """The DecodeRequest of one call: the model's decoding settings with `changes`
        (DecodeConfig keys), its sampling, and the ids its languages put first."""
        from translator.decode.request import DecodeRequest
        from translator.decode.sampling import sampling_options
        from translator.engines.load import starts

        engine = self.engine
        dc = _decoding(engine.cfg.decode, changes if decode is None else decode, nbest)
        sampler = sampling_options(sampling, temperature, seed, changes.get("beam"))
        if sampler is not None and not engine.capabilities.sampling:
            raise UserError(f"sampling: {engine.describe()['engine']} only searches")
        tgt, src = tgt_lang or self._tgt_lang, src_lang or self._src_lang
        source, start = starts(engine.cfg, engine.tokenizer, engine.language_codes, self._tag,
                               tgt, src_lang=src, option="tgt_lang")  # fmt: skip
        request = DecodeRequest(dc, nbest, sampler, tuple(source), target_start=start,
                                alignments=alignments, confidence=confidence)  # fmt: skip
        engine.check_alignments(request, "alignments")
        engine.check_confidence(request, "confidence")
        return request


def _decoding(dc, changes: dict, nbest: int):
    """The decode section `dc` with `changes` checked as a config's keys are, its beam at
    least `nbest` wide."""
    from translator.config.load import section_with

    dc = section_with(dc, changes, "decoding settings")
    return dc.replace(beam=nbest) if nbest > dc.beam else dc


def _lines(text, what: str = "text") -> list[str]:
    """A call's texts as a list, each checked to be a string."""
    lines = [text] if isinstance(text, str) else text
    if not isinstance(lines, (list, tuple)) or not all(isinstance(t, str) for t in lines):
        raise UserError(f"{what}: give a string or a list of strings")
    return list(lines)


def _guided(engine, request, lines: list[str], settings: dict):
    """`request` with the call's target prefixes, required phrases and glossary terms read
    into ids for `lines`."""
    from translator.decode.line_guides import Terms

    prefix, phrases, terms = (settings.get(k) for k in ("prefix", "constraints", "terms"))
    prefixes = [prefix] * len(lines) if isinstance(prefix, str) else prefix
    if phrases is not None and all(isinstance(p, str) for p in phrases):
        phrases = [list(phrases) for _ in lines]  # the same phrases for every text
    if terms:
        glossary = Terms(list(terms.items()))
        phrases = phrases or [[] for _ in lines]
        phrases = [p + [t for t in glossary.found(line) if t not in p]
                   for p, line in zip(phrases, lines)]  # fmt: skip
    if phrases is not None and len(phrases) != len(lines):
        raise UserError(f"constraints: {len(phrases)} lists for {len(lines)} texts")
    if phrases is not None and not any(phrases):
        phrases = None
    if phrases is not None and not engine.capabilities.constraints:
        raise UserError("constraints: an exported (CTranslate2) model cannot require phrases")
    if prefixes is None and phrases is None:
        return request
    return request.guided(engine.tokenizer, lines, engine.max_target, prefixes, phrases)
