"""Language codes of an imported multilingual model, in one of two places:
- "both" (M2M100, NLLB-200: pretrained/m2m100.py): the source begins with its language's
  code, and the decoder's first output is forced to the target language's code, which the
  output text never shows;
- "source" (OPUS-MT's multilingual Marian models, pretrained/marian.py): the target
  language's token, such as >>fra<<, begins the source; the source language is not named.

The codes and their ids are the checkpoint's (`source["languages"]`: code -> translator
id); the languages of a call become ids of its DecodeRequest (`source`, the ids before
each source line, and `target_start`, the ids each output is forced to begin with), or the
engine's defaults that load_engine sets when it builds the engine."""

from __future__ import annotations

from translator.errors import UserError


class Codes(dict):
    """code -> translator id, and `at`: where the codes go ("both" or "source")."""

    def __init__(self, codes: dict[str, int], at: str = "both"):
        super().__init__(codes)
        self.at = at


def language_codes(source: dict | None) -> Codes | None:
    """The codes of a checkpoint's `source` record (also in an export's manifest; None: a
    model without)."""
    codes = (source or {}).get("languages")
    if not isinstance(codes, dict) or not codes:
        return None
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in codes.items()):
        raise UserError("key 'source.languages' must map language codes to ids")
    at = source.get("languages_at", "both")
    if at not in ("both", "source"):
        raise UserError(f"key 'source.languages_at' is {at!r}: both or source expected")
    return Codes(codes, at)


def model_code(codes: dict[str, int], lang: str, option: str) -> str:
    """The model's code for `lang`, given in any spelling (config.languages.model_language);
    an unknown one is a one-line error listing the model's."""
    from translator.config.languages import model_language

    code = model_language(lang, list(codes))
    if code is None:
        raise UserError(
            f"{option} {lang}: not a language of this model; its languages: {', '.join(codes)}"
        )
    return code


def code_id(codes: dict[str, int], lang: str, option: str) -> int:
    """The id of `lang`'s code (model_code)."""
    return codes[model_code(codes, lang, option)]


def code_ids(
    codes: dict[str, int],
    data,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    options: tuple[str, str] = ("--src-lang", "--tgt-lang"),
) -> tuple[list[int], list[int]]:
    """(the source's first ids, the output's forced first ids) for `src_lang` and `tgt_lang`,
    the model's own (data.src_lang, data.tgt_lang) where not given; `options`: how errors
    name the two settings."""
    tgt = tgt_lang or data.tgt_lang
    if tgt_lang is None and tgt not in codes:  # a model imported with no default target
        raise UserError(
            f"this model translates into several languages; give {options[1]} "
            f"(one of {', '.join(codes)})"
        )
    if getattr(codes, "at", "both") == "source":  # the target's token before the source
        return [code_id(codes, tgt, options[1])], []
    src = code_id(codes, src_lang or data.src_lang, options[0])
    return [src], [code_id(codes, tgt, options[1])]
