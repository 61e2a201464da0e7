"""The languages of a multilingual model (data.directions, or data.corpora entries with
their own src_lang/tgt_lang): which directions it was trained on, and the target-language
tag, `<2xx>`, put before a source to ask for language xx.

A model with one target language needs no tag (many sources to one target: the encoder
sees which language it reads); one with several gets a tag per target language, a
sentencepiece piece of its own that searches never output. Imports no torch.
"""

from __future__ import annotations

from translator.errors import UserError


def lang_tag(lang: str) -> str:
    """The source tag that asks for target language `lang`."""
    return f"<2{lang}>"


def directions(data) -> list[tuple[str, str]]:
    """Each (source, target) language pair the training corpora hold, once, in config order
    (the data section's own pair when it has no corpora)."""
    pairs = [
        (c.src_lang or data.src_lang, c.tgt_lang or data.tgt_lang)
        for c in data.training_corpora() or []
    ]
    return list(dict.fromkeys(pairs)) or [(data.src_lang, data.tgt_lang)]


def target_languages(data) -> list[str]:
    """The target languages, each once, in config order."""
    return list(dict.fromkeys(t for _, t in directions(data)))


def source_languages(data) -> list[str]:
    return list(dict.fromkeys(s for s, _ in directions(data)))


def languages(data) -> list[str]:
    """Every language the training corpora hold, each once."""
    return list(dict.fromkeys(lang for pair in directions(data) for lang in pair))


def served_directions(data, codes=None) -> list[tuple[str, str]]:
    """The (source, target) pairs a model translates: its corpora's directions, or those of
    its language `codes` (engines/lang_codes.py), where an imported model has them."""
    if codes is None:
        return directions(data)
    if codes.at == "source":  # OPUS-MT: its one source, the target's token before it
        return [(data.src_lang, code) for code in codes]
    return [(a, b) for a in codes for b in codes if a != b]  # NLLB, M2M100: every code both ways


def served_languages(data, codes=None) -> dict[str, list[str]]:
    """What `serve` and describe() report of a model's languages (served_directions): its
    source and target languages, and every one it reads or writes, each once."""
    if codes is not None and codes.at == "both":  # every code both ways, in the model's order
        return {key: list(codes) for key in ("languages", "source_languages", "target_languages")}
    pairs = served_directions(data, codes)
    return {
        "languages": list(dict.fromkeys(lang for pair in pairs for lang in pair)),
        "source_languages": list(dict.fromkeys(s for s, _ in pairs)),
        "target_languages": list(dict.fromkeys(t for _, t in pairs)),
    }


def served_target(data, codes, lang: str, option: str = "tgt_lang") -> str:
    """The model's own code for target language `lang`, given in any spelling
    (model_language); one the model does not translate into is a one-line error listing
    those it does."""
    return _named_target(lang, served_languages(data, codes)["target_languages"], option)


def default_target(data, codes, tgt_lang: str | None = None) -> str | None:
    """The model's code for the target of a request that names none: serve's `tgt_lang` (in
    any spelling), else the default of a model of language codes (NLLB-200 has none), else
    None: a model trained here names its target languages with tags, and needs no default."""
    if tgt_lang is not None:
        return served_target(data, codes, tgt_lang)
    return data.tgt_lang if codes is not None and data.tgt_lang in codes else None


def lang_tags(data) -> list[str]:
    """The target-language tags in use: one per target language when there are several."""
    targets = target_languages(data)
    return [lang_tag(t) for t in targets] if len(targets) > 1 else []


def multilingual(data) -> bool:
    return len(directions(data)) > 1


def direction_name(src: str, tgt: str) -> str:
    return f"{src}-{tgt}"


def spelled(pairs: list[tuple[str, str]]) -> str:
    """Language pairs for a message: "de -> en, de -> fr"."""
    return ", ".join(f"{src} -> {tgt}" for src, tgt in pairs)


def check_target(data, tgt_lang: str | None, option: str = "--tgt-lang") -> str | None:
    """The tag for `tgt_lang` (None where the model has one target language, which it may
    name); a missing or unknown language is a one-line error listing the model's."""
    targets = target_languages(data)
    listed = ", ".join(targets)
    if tgt_lang is None:
        if len(targets) > 1:
            raise UserError(f"this model translates into several languages; give {option} "
                            f"(one of {listed})")  # fmt: skip
        return None
    tgt = _named_target(tgt_lang, targets, option)
    return lang_tag(tgt) if len(targets) > 1 else None


def _named_target(lang: str, targets: list[str], option: str) -> str:
    """The one of `targets` that `lang` names in any spelling (model_language); none is a
    one-line error listing them."""
    found = model_language(lang, targets)
    if found is None:
        raise UserError(f"{option} {lang}: the model does not translate into it; its target "
                        f"languages: {', '.join(targets)}")  # fmt: skip
    return found


def check_corpus_tag(data, tag: str | None) -> None:
    """A --tag that is a target-language tag is a one-line error naming --tgt-lang, which
    alone gives those tags (and checks the language)."""
    langs = {lang_tag(t): t for t in target_languages(data)} if lang_tags(data) else {}
    if tag is None or tag in data.corpus_tags or tag not in langs:
        return  # (another unknown tag: Tokenizer.tag_prefix's error lists the corpus tags)
    listed = ", ".join(data.corpus_tags) or "none (it was trained without data.corpora tags)"
    raise UserError(f"--tag {tag}: a target-language tag, which only --tgt-lang gives (use "
                    f"--tgt-lang {langs[tag]}); its tags: {listed}")  # fmt: skip


def check_source(data, src_lang: str, option: str = "--src-lang") -> str:
    """The model's own code for the source language `src_lang`; one it does not read is a
    one-line error listing those it does."""
    sources = source_languages(data)
    src = model_language(src_lang, sources)
    if src is None:
        raise UserError(f"{option} {src_lang}: the model does not read it; its source "
                        f"languages: {', '.join(sources)}")  # fmt: skip
    return src


def model_language(lang: str, model_codes: list[str]) -> str | None:
    """The one of `model_codes` that `lang` names in any spelling: itself, or `en` for
    `en-GB`, `fra_Latn` for `fr` (config/language_names.py); None for none."""
    if lang in model_codes:
        return lang
    from translator.config.language_names import Names, named_languages

    found = Names(named_languages(list(model_codes))).find(lang)
    return None if found is None else found.model


def lang_prefix(tokenizer, data, tgt_lang: str | None, option: str = "--tgt-lang") -> list[int]:
    """The source ids that ask for `tgt_lang` ([] for a model with one target language)."""
    tag = check_target(data, tgt_lang, option)
    if tag is None:
        return []
    ids = tokenizer.tag_ids([tag])[0]
    if not ids:
        raise UserError(f"{option} {tgt_lang}: tag {tag} is not a piece of the model's "
                        "vocabulary; prepare the data again")  # fmt: skip
    return ids


def eval_direction(data, src_lang: str | None, tgt_lang: str | None) -> tuple[str, str]:
    """The (source, target) languages `translator eval` scores: those given, else the only
    one the model has; zero-shot pairs (a source and a target it never saw together) are
    allowed."""
    if not multilingual(data):
        src, tgt = directions(data)[0]
        return src_lang or src, tgt_lang or tgt
    check_target(data, tgt_lang)
    targets = target_languages(data)
    tgt = targets[0] if tgt_lang is None else model_language(tgt_lang, targets)
    if src_lang is None:
        sources = [s for s, t in directions(data) if t == tgt]
        if len(sources) != 1:
            listed = ", ".join(source_languages(data))
            raise UserError(f"this model reads several languages; give --src-lang (one of "
                            f"{listed})")  # fmt: skip
        src_lang = sources[0]
    if src_lang == tgt:
        raise UserError(f"--src-lang {src_lang} and --tgt-lang {tgt}: give two languages")
    return src_lang, tgt


def scored_direction(data, src_lang: str | None, tgt_lang: str | None):
    """The data section whose dev and test splits `translator eval` scores: one direction
    (eval_direction) read from the model's folder or dataset."""
    src, tgt = eval_direction(data, src_lang, tgt_lang)
    return data.replace(corpora=None, directions=None, src_lang=src, tgt_lang=tgt)
