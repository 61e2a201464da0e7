"""The one way to open a model to translate with: `load_engine`. A checkpoint file gives
the PyTorch translator (optionally quantized), a folder from `translator export` the
CTranslate2 one, and several checkpoints with `ensemble` one translator of all of them."""

from __future__ import annotations

from pathlib import Path

from translator.engines.engine import Engine
from translator.errors import UserError


def load_engine(
    paths: str | Path | list,
    device: str = "auto",
    quantize: str | None = None,
    ensemble: bool = False,
    tag: str | None = None,
    tgt_lang: str | None = None,
    any_language: bool = False,
    src_lang: str | None = None,
) -> Engine:
    """One model's engine (a checkpoint file, or a folder from `translator export`), or with
    `ensemble` the translator of all the checkpoints as one model: decoding settings and
    languages from the first, the shortest length limit of all. `quantize`: int8 on the CPU.
    `tag`: a corpus tag of the model's (data.corpora) put before every source; `tgt_lang`:
    the target language of a model of several (config/languages.py), whose tag goes first;
    without it such a model is a one-line error, unless `any_language` (each call then sets
    its own prefix, as serve's requests do). An imported model with language codes
    (engines/lang_codes.py: NLLB, M2M100) takes `src_lang` and `tgt_lang` as codes, its own
    languages where not given: the source's code goes first, and every output is forced to
    begin with the target's, which its text never shows."""
    return _open(paths, device, quantize, ensemble, tag, tgt_lang, any_language, src_lang)


def _source_option(option: str) -> str:
    """How an error names the source language beside `option`, the target's: serve's field
    (tgt_lang, src_lang) or the command line's option."""
    return "src_lang" if option == "tgt_lang" else "--src-lang"


def _prefix_of(
    cfg, tokenizer, tag, tgt_lang, any_language, src_lang=None, option: str = "--tgt-lang"
) -> list[int]:
    """The source ids put before every line of a request that names none."""
    from translator.config.languages import check_source, target_languages

    if src_lang is not None:
        check_source(cfg.data, src_lang, _source_option(option))
    if any_language and tgt_lang is None and len(target_languages(cfg.data)) > 1:
        return corpus_tag_prefix(tokenizer, cfg.data, tag)
    return source_prefix(tokenizer, cfg.data, tgt_lang, tag, option)


def source_prefix(
    tokenizer, data, tgt_lang: str | None, tag: str | None, option: str = "--tgt-lang"
) -> list[int]:
    """The source ids put before every line: the language tag, then the corpus tag;
    `option`: how an error names the language's setting."""
    from translator.config.languages import lang_prefix

    return lang_prefix(tokenizer, data, tgt_lang, option) + corpus_tag_prefix(tokenizer, data, tag)


def corpus_tag_prefix(tokenizer, data, tag: str | None) -> list[int]:
    """The source ids of `tag`, one of the model's corpus tags ([] for None). A language tag
    is refused: it comes from the target language alone, so that a source holds one."""
    from translator.config.languages import check_corpus_tag

    check_corpus_tag(data, tag)
    return tokenizer.tag_prefix(tag, data.corpus_tags)


def starts(
    cfg,
    tokenizer,
    codes,
    tag: str | None,
    tgt_lang: str | None,
    any_language: bool = False,
    src_lang: str | None = None,
    option: str = "--tgt-lang",
) -> tuple[list[int], tuple[int, ...]]:
    """(the source ids put before every line, the target ids every output is forced to
    begin with) for these languages, of a model with language `codes` or without (None);
    `option`: how an error names the target language's setting. load_engine takes them as
    an engine's defaults, serve (serve/parse.py) as each request's."""
    if codes is None:
        prefix = _prefix_of(cfg, tokenizer, tag, tgt_lang, any_language, src_lang, option)
        return prefix, ()
    from translator.engines.lang_codes import code_ids

    if src_lang is not None and codes.at == "source":
        raise UserError(f"{_source_option(option)}: this model's sources carry no language "
                        f"code; give {option} alone")  # fmt: skip
    tags = corpus_tag_prefix(tokenizer, cfg.data, tag)
    if any_language and tgt_lang is None and cfg.data.tgt_lang not in codes:
        return tags, ()  # (no language of its own: serve's requests name theirs)
    options = (_source_option(option), option)
    src, tgt = code_ids(codes, cfg.data, src_lang, tgt_lang, options)
    return src + tags, tuple(tgt)


def _open(paths, device: str, quantize: str | None, ensemble: bool, *languages) -> Engine:
    """The engine, its default source prefix from `languages` (tag, tgt_lang, any_language,
    src_lang)."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not ensemble and len(paths) > 1:
        raise UserError(
            f"{len(paths)} --checkpoint options: add --ensemble to decode with all of "
            "them as one model, or give one"
        )
    if not ensemble and Path(paths[0]).is_dir():
        return _exported(Path(paths[0]), device, quantize, languages)
    for path in paths:
        if Path(path).is_dir():
            raise UserError(f"--ensemble: {path} is an exported folder; ensembles take checkpoints")
    if quantize is not None:
        _check_quantize(quantize, device)
    from translator.decode.translator import Translator
    from translator.engines.lang_codes import language_codes
    from translator.models.checkpoint import Checkpoint
    from translator.runtime import pick_device

    device = "cpu" if quantize is not None else device
    ckpts = [Checkpoint.load(p) for p in paths]
    built = [c.build(str(p)) for c, p in zip(ckpts, paths)]
    codes = language_codes(ckpts[0].source)
    if quantize is not None:  # each model, an ensemble's members too
        from translator.engines.quantize import quantize_model

        built = [(c, t, quantize_model(m.to(pick_device(device)).eval(), quantize))
                 for c, t, m in built]  # fmt: skip
    if ensemble:
        if codes is not None:
            raise UserError(f"--ensemble: {paths[0]} is a model of language codes (imported); "
                            "ensembles take translator's own models")  # fmt: skip
        return _ensemble(paths, built, pick_device(device), languages, ensemble_calibration(ckpts))
    cfg, tokenizer, model = built[0]
    prefix, start = starts(cfg, tokenizer, codes, *languages)
    return Translator(
        model, tokenizer, cfg, pick_device(device), source_prefix=prefix, target_start=start,
        language_codes=codes, calibration=ckpts[0].calibration,
    )  # fmt: skip


def _exported(path: Path, device: str, quantize: str | None, languages) -> Engine:
    if quantize is not None:
        raise UserError(
            f"--quantize {quantize}: {path} is an exported model, quantized when it was "
            "exported (translator export --quantization); --quantize is for checkpoint files"
        )
    from translator.engines.ct2 import ExportedTranslator

    return ExportedTranslator(
        path, device, lambda cfg, tok, codes: starts(cfg, tok, codes, *languages)
    )


def ensemble_calibration(ckpts: list) -> dict | None:
    """The calibration `translator calibrate --ensemble` fitted for exactly these members
    (their weights, in any order), which it keeps in the member it named first; None where
    there is none. An ensemble of one decodes as its model, so it takes that model's own."""
    from translator.models.checkpoint import members_key

    if len(ckpts) == 1:
        return ckpts[0].calibration

    key = None
    for ckpt in ckpts:
        if ckpt.ensemble_calibrations:
            key = key or members_key([c.model for c in ckpts])
            if key in ckpt.ensemble_calibrations:
                return ckpt.ensemble_calibrations[key]
    return None


def _ensemble(paths: list, built: list, device, languages, calibration: dict | None):
    from translator.decode.translator import Translator
    from translator.models.ensemble import Ensemble

    (cfg, tokenizer, _), first = built[0], paths[0]
    for path, (other_cfg, other_tok, _) in zip(paths[1:], built[1:]):
        if other_tok.fingerprint() != tokenizer.fingerprint():
            raise UserError(
                f"--ensemble: {path} and {first} have different tokenizers; the models of an "
                "ensemble must be trained with the same sentencepiece model"
            )
        # A joint vocabulary can be shared by a model of the opposite direction.
        pair = f"{cfg.data.src_lang}->{cfg.data.tgt_lang}"
        other = f"{other_cfg.data.src_lang}->{other_cfg.data.tgt_lang}"
        if pair != other:
            raise UserError(f"--ensemble: {path} translates {other} but {first} translates {pair}")
    return Translator(
        Ensemble([model for _, _, model in built]),
        tokenizer,
        cfg,
        device,
        name="ensemble of " + " + ".join(c.model.type for c, _, _ in built),
        max_source=min(c.model.max_positions for c, _, _ in built),
        source_prefix=_prefix_of(cfg, tokenizer, *languages),
        calibration=calibration,
    )


def _check_quantize(quantize: str, device: str) -> None:
    """A one-line error for an unknown scheme or a device other than the CPU."""
    from translator.engines.quantize import check_scheme

    check_scheme(quantize)
    if device not in ("auto", "cpu"):
        raise UserError(
            f"--quantize {quantize} runs on the CPU (PyTorch dynamic quantization), "
            f"not on --device {device}",
            "use --device cpu",
        )
