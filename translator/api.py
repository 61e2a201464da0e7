"""translator as a library: `load` opens a model once (a checkpoint, an export folder, or
several checkpoints as an ensemble), and its Model translates, scores and translates
documents with the command line's decoding settings given per call. Each call builds its
own DecodeRequest, so one Model serves many threads with different settings at once; a
setting of the wrong kind is a UserError naming it, as an option is on the command line."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from translator.config.ranges import BEAM, SEED, TEMPERATURE
from translator.errors import UserError

Texts = str | list[str]
LANGUAGES = ("src_lang", "tgt_lang")
SAMPLING = ("sampling", "temperature", "seed")
GUIDES = ("prefix", "constraints", "terms", "terms_ignore_case")
# what translate and hypotheses take that a document, one best translation a sentence, does not
LINE_SETTINGS = {"nbest", "alignments", "confidence", *SAMPLING, *GUIDES}
# the command line's options that are keywords here, as the code both share names them
OPTIONS = {
    f"--{name.replace('_', '-')}": name
    for name in ("beam", "len_penalty", "max_len_a", "max_len_b", "batch_size", "nbest",
                 "alignments", "confidence", *SAMPLING, *GUIDES, *LANGUAGES, "quantize",
                 "tag", "format", "device")
} | {"--constraint": "constraints"}  # fmt: skip
OPTION = re.compile("|".join(sorted(map(re.escape, OPTIONS), key=len, reverse=True)) + r"\b")


def _keywords(call):
    """`call` with the UserErrors of the code it shares with the command line naming its
    settings as this API's keywords (beam, not --beam)."""

    @functools.wraps(call)
    def named(*args, **kwargs):
        try:
            return call(*args, **kwargs)
        except UserError as err:
            message = OPTION.sub(lambda found: OPTIONS[found[0]], err.message)
            if message == err.message:
                raise
            raise type(err)(message, err.hint) from None

    return named


@_keywords
def load(
    model: str | os.PathLike | list,
    device: str = "auto",
    quantize: str | None = None,
    tag: str | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
) -> Model:
    """The model at `model`: a checkpoint file, a folder from `translator export`, or a list
    of checkpoints decoded as one ensemble. `device`: auto, cpu, cuda, cuda:N or mps;
    `quantize`: "int8" on the CPU; `tag`: a corpus tag put before every source; `src_lang`,
    `tgt_lang`: the languages of calls that name none (a model of several target languages
    needs one, here or in each call)."""
    from translator.engines.load import load_engine
    from translator.runtime import pick_device

    paths = list(model) if isinstance(model, (list, tuple)) else [model]
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise UserError("load(): give a checkpoint, an export folder or a list of checkpoints")
    for path in paths:
        if not Path(path).exists():
            raise UserError(f"load(): {path}: no such checkpoint or export folder", "a released "
                            "model is imported first: translator import SOURCE --output CKPT")  # fmt: skip
    pick_device(_text("device", device), "device")  # (checked here to be named as the keyword)
    for name, value in {"quantize": quantize, "tag": tag, "src_lang": src_lang,
                        "tgt_lang": tgt_lang}.items():  # fmt: skip
        _text(name, value, none=True)
    engine = load_engine([Path(p) for p in paths], device, quantize, ensemble=len(paths) > 1,
                         tag=tag, any_language=True)  # fmt: skip
    return Model(engine, tag, src_lang, tgt_lang)


class Model:
    """An opened model. Its `engine` (engines/engine.py) is shared and never changed; the
    keyword settings of each call are that call's alone."""

    def __init__(self, engine, tag: str | None, src_lang: str | None, tgt_lang: str | None):
        self.engine = engine
        self._tag, self._src_lang, self._tgt_lang = tag, src_lang, tgt_lang

    def __repr__(self) -> str:
        info, name = self.info, getattr(self.engine, "name", "")
        kind = name if name.startswith("ensemble") else info["family"]
        source, target = self._languages()
        return f"Model({kind}, {info['engine']}, {source}-{target})"

    @property
    def info(self) -> dict:
        """What the model is: family, engine, parameters, device, languages, beam."""
        return self.engine.describe()

    @_keywords
    def translate(self, text: Texts, progress: bool = False, **settings: Any) -> Texts:
        """The best translation of `text`, or of each text of a list. `settings`: beam,
        len_penalty, max_len_a, max_len_b, batch_size; sampling ("topk:K" or "topp:P"),
        temperature, seed; prefix (a text, or one per text), constraints (a phrase, a list
        of phrases, or a list of them per text), terms (a {source term: target term}
        glossary) and terms_ignore_case; src_lang, tgt_lang."""
        found = self.hypotheses(text, progress=progress, **settings)
        return found[0].text if isinstance(text, str) else [hyps[0].text for hyps in found]

    @_keywords
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
        guides = {k: settings.pop(k) for k in GUIDES if k in settings}
        nbest = _whole("nbest", nbest, BEAM)
        request = self._request(settings, nbest, _flag("alignments", alignments),
                                _flag("confidence", confidence))  # fmt: skip
        request = _guided(self.engine, request, lines, guides)
        found = self.engine.translate(lines, request, progress=progress) if lines else []
        return found[0] if isinstance(text, str) else found

    @_keywords
    def score(
        self, source: Texts, target: Texts, alignments: bool = False, progress: bool = False,
        **settings: Any,
    ):  # fmt: skip
        """The Score (logprob, tokens, mean; with `alignments` the target's word alignment)
        of `target` given `source`, or a list of them for aligned lists. `settings`:
        src_lang, tgt_lang, batch_size."""
        if other := sorted(set(settings) - {*LANGUAGES, "batch_size"}):
            raise UserError(f"score() takes no {', '.join(other)}: it scores the targets given")
        sources, targets = _lines(source), _lines(target, "target")
        if isinstance(source, str) != isinstance(target, str):
            kinds = ["a string" if isinstance(t, str) else "a list" for t in (source, target)]
            raise UserError(
                f"score(): the source is {kinds[0]} and the target {kinds[1]}; give one text "
                "each, or aligned lists of the same length"
            )
        if len(sources) != len(targets):
            raise UserError(
                f"score(): {len(sources)} sources and {len(targets)} targets; give one "
                "text each, or aligned lists of the same length"
            )
        request = self._request(settings, alignments=_flag("alignments", alignments))
        found = self.engine.score(sources, targets, request, progress=progress) if sources else []
        return found[0] if isinstance(source, str) else found

    @_keywords
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
        elif isinstance(document, os.PathLike):
            name = Path(document)
            data = name.read_bytes() if name.is_file() else None
            if data is None:
                raise UserError(f"{name}: no such file")
        else:
            raise UserError("translate_document(): give a text, bytes or a file's path")
        fmt = format_of(name, _text("format", format, none=True) and format.lower()) or "text"
        if lines_only := sorted(set(settings) & LINE_SETTINGS):
            raise UserError(f"translate_document() takes no {', '.join(lines_only)}: a "
                            "document gets one best translation a sentence")  # fmt: skip
        source, target = (settings.get(k) or own for k, own in
                          zip(LANGUAGES, self._languages()))  # fmt: skip
        translate = engine_translate(self.engine, self._request(settings))
        raw = data.encode("utf-8") if isinstance(data, str) else data
        try:
            out = translate_bytes(raw, name, fmt, translate, source, target)
        except UserError as err:  # (a hint naming the command's option: this call's)
            if err.hint is None or "--format " not in err.hint:
                raise
            raise UserError(err.message, err.hint.replace("--format ", "format=")) from None
        return out.decode("utf-8") if isinstance(document, str) else out

    def _languages(self) -> tuple[str | None, str | None]:
        """The source and target languages of a call that names none."""
        data = self.engine.cfg.data
        return (self._src_lang or getattr(data, "src_lang", None),
                self._tgt_lang or getattr(data, "tgt_lang", None))  # fmt: skip

    def _request(self, settings: dict, nbest: int = 1, alignments: bool = False,
                 confidence: bool = False):  # fmt: skip
        """The DecodeRequest of one call's `settings`: its languages, sampling, and the
        model's decoding settings changed by the rest (DecodeConfig keys)."""
        from translator.decode.request import DecodeRequest
        from translator.decode.sampling import sampling_options
        from translator.engines.load import starts

        engine, settings = self.engine, dict(settings)
        src, tgt = (_text(k, settings.pop(k, None), none=True) for k in LANGUAGES)
        sampler = _sampling(*(settings.pop(k, None) for k in SAMPLING))
        dc = _decoding(engine.cfg.decode, settings, nbest)
        sampler = sampling_options(*sampler, settings.get("beam"))
        if sampler is not None and not engine.capabilities.sampling:
            raise UserError(f"sampling: a {engine.describe()['engine']} model only searches")
        source, start = starts(engine.cfg, engine.tokenizer, engine.language_codes, self._tag,
                               tgt or self._tgt_lang, src_lang=src or self._src_lang,
                               option="tgt_lang")  # fmt: skip
        request = DecodeRequest(dc, nbest, sampler, tuple(source), target_start=start,
                                alignments=alignments, confidence=confidence)  # fmt: skip
        engine.check_alignments(request, "alignments")
        engine.check_confidence(request, "confidence")
        return request


def _decoding(dc, changes: dict, nbest: int):
    """The decode section `dc` with `changes` checked as a config's keys are, its beam at
    least `nbest` wide."""
    from translator.cli_options import decode_overrides
    from translator.config.load import section_with

    return decode_overrides(section_with(dc, changes, "decoding settings"), nbest=nbest)


def _text(name: str, value, none: bool = False) -> str | None:
    if (value is None and none) or isinstance(value, str):
        return value
    raise UserError(f"{name}: give a string, got {value!r}")


def _flag(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    raise UserError(f"{name}: give True or False, got {value!r}")


def _whole(name: str, value, bounds: tuple) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and bounds[0] <= value <= bounds[1]:
        return value
    raise UserError(f"{name}: give a whole number from {bounds[0]} to {bounds[1]}, got {value!r}")


def _sampling(spec, temperature, seed) -> tuple:
    """sampling_options' arguments, each checked to be of its kind and range."""
    _text("sampling", spec, none=True)
    if temperature is not None:
        low, high = TEMPERATURE
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, (int, float))
            or not (low <= temperature <= high)
        ):
            raise UserError(f"temperature: give a number from {low} to {high}, got {temperature!r}")
        temperature = float(temperature)
    return spec, temperature, None if seed is None else _whole("seed", seed, SEED)


def _lines(text, what: str = "text") -> list[str]:
    """A call's texts as a list, each checked to be a string of valid Unicode (an error
    names the argument: `what`, and for a list the item's number)."""
    from translator.data.user_text import valid

    lines = [text] if isinstance(text, str) else text
    if not isinstance(lines, (list, tuple)) or not all(isinstance(t, str) for t in lines):
        raise UserError(f"{what}: give a string or a list of strings")
    for i, line in enumerate(lines):
        valid(line, what if isinstance(text, str) else f"{what} {i + 1} of the list")
    return list(lines)


def _prefixes(prefix, n: int) -> list[str | None] | None:
    """Each text's target prefix: one text for all (refused where it shows nothing, as
    --prefix is), or one text or None per text."""
    from translator.data.user_text import phrase
    from translator.decode.translate_io import checked_text

    if prefix is None or isinstance(prefix, str):
        return None if prefix is None else [phrase(checked_text(prefix, "prefix"), "prefix")] * n
    if isinstance(prefix, (list, tuple)) and all(p is None or isinstance(p, str) for p in prefix):
        return list(prefix)
    raise UserError("prefix: give a text, or a text (or None) per text")


def _phrases(constraints, n: int) -> list[list[str]] | None:
    """Each text's required phrases: one phrase or a list of them for every text, or a list
    (or None) per text."""
    if constraints is None:
        return None
    given = [constraints] if isinstance(constraints, str) else constraints
    if isinstance(given, (list, tuple)):
        if all(isinstance(c, str) for c in given):
            return [list(given) for _ in range(n)]
        each = lambda c: isinstance(c, (list, tuple)) and all(isinstance(p, str) for p in c)  # noqa: E731
        if all(c is None or each(c) for c in given):
            if len(given) != n:
                raise UserError(f"constraints: {len(given)} lists for {n} texts")
            return [list(c or []) for c in given]
    raise UserError("constraints: give a phrase, a list of phrases, or a list of them per text")


def _guided(engine, request, lines: list[str], guides: dict):
    """`request` with the call's target prefixes, required phrases and glossary terms read
    into ids for `lines`."""
    from translator.decode.line_guides import Terms

    prefixes = _prefixes(guides.get("prefix"), len(lines))
    phrases = _phrases(guides.get("constraints"), len(lines))
    terms = guides.get("terms")
    if terms is None and guides.get("terms_ignore_case") is not None:
        raise UserError("terms_ignore_case goes with terms: give the glossary too")
    if terms is not None:
        if not isinstance(terms, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in terms.items()
        ):
            raise UserError("terms: give a glossary, {source term: target term}, of strings")
        if terms and not engine.capabilities.constraints:
            raise UserError("terms: an exported (CTranslate2) model cannot require phrases")
        glossary = Terms(list(terms.items()), _flag("terms_ignore_case",
                                                    guides.get("terms_ignore_case", False)))  # fmt: skip
        phrases = phrases or [[] for _ in lines]
        for given, line in zip(phrases, lines):
            glossary.add_found(given, line)
    if phrases is not None and not any(phrases):
        phrases = None
    if phrases is not None and not engine.capabilities.constraints:
        raise UserError("constraints: an exported (CTranslate2) model cannot require phrases")
    if prefixes is None and phrases is None:
        return request
    return request.guided(engine.tokenizer, lines, engine.max_target, prefixes, phrases)
