"""The languages a LibreTranslate client sees: the served model's languages under the
two-letter codes LibreTranslate uses (ISO 639-1: `de`), whatever codes the model itself
uses (NLLB's `deu_Latn`, OPUS-MT's `deu`, or the `de` of a model trained here).

A request may name a language by either code, or a regional variant of one
(config/language_names.py).
"""

from __future__ import annotations

from translator.config.language_names import Language, Names, named_languages
from translator.config.languages import default_target, served_directions
from translator.serve.limits import LimitError


class Languages:
    """The served engine's source and target languages, and each source's targets."""

    def __init__(self, engine):
        codes = engine.language_codes
        pairs = served_directions(engine.cfg.data, codes)
        self.codes, self.data = codes, engine.cfg.data
        models = list(dict.fromkeys(lang for pair in pairs for lang in pair))
        self.all = named_languages(models)
        by_model = {lang.model: lang for lang in self.all}
        self.targets: dict[str, list[Language]] = {lang.model: [] for lang in self.all}
        for src, tgt in pairs:
            self.targets[src].append(by_model[tgt])
        self.sources = [lang for lang in self.all if self.targets[lang.model]]
        self.find = Names(self.all).find

    def listing(self) -> list[dict]:
        """The body of /languages: every language with the codes it translates into."""
        return [
            {"code": lang.code, "name": lang.name,
             "targets": [t.code for t in self.targets[lang.model]]}
            for lang in self.all
        ]  # fmt: skip

    def source(self, code: str) -> tuple[Language, bool]:
        """(the source language, whether `auto` chose it); `auto` only where the model reads
        one language, since nothing here detects a language."""
        listed = ", ".join(lang.code for lang in self.sources)
        if code.strip().lower() == "auto":
            return self.only_source("source auto", "name one"), True
        lang = self.find(code)
        if lang is None or lang not in self.sources:
            raise LimitError(400, f"{code} is not supported as a source; this model reads {listed}")
        return lang, False

    def only_source(self, what: str, fix: str) -> Language:
        """The model's one source language, which `auto` and /detect stand for; a model of
        several is a 400 that names `what` was asked and what to do instead (`fix`)."""
        if len(self.sources) == 1:
            return self.sources[0]
        listed = ", ".join(lang.code for lang in self.sources)
        raise LimitError(400, f"{what}: this server detects no language and the model reads "
                              f"several ({listed}); {fix}")  # fmt: skip

    def defaults(self, tgt_lang: str | None = None) -> tuple[Language | None, Language]:
        """(the source, None for `auto` where the model reads one language, and the target)
        a request that names none would get: the model's default languages, the target
        `tgt_lang` (serve's --tgt-lang) where given; the first where it has none."""
        by_model = {lang.model: lang for lang in self.all}
        source = by_model.get(self.data.src_lang)
        if source not in self.sources:
            source = self.sources[0]
        targets = self.targets[source.model]
        target = by_model.get(default_target(self.data, self.codes, tgt_lang) or self.data.tgt_lang)
        if target not in targets:
            target = targets[0]
        return (None if len(self.sources) == 1 else source), target

    def target(self, source: Language, code: str) -> Language:
        lang = self.find(code)
        targets = self.targets[source.model]
        if lang is None or lang not in targets:
            listed = ", ".join(t.code for t in targets)
            raise LimitError(
                400, f"{code} is not supported as a target from {source.code}; this model "
                f"translates {source.code} into {listed}"
            )  # fmt: skip
        return lang
