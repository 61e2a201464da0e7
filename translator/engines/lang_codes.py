"""Language codes of an imported multilingual model (M2M100, NLLB-200: pretrained/m2m100.py):
the source begins with its language's code, and the decoder's first output is forced to
the target language's code, which the output text never shows.

The codes and their ids are the checkpoint's (`source["languages"]`: code -> translator
id); the languages of a call become ids of its DecodeRequest (`source`, the ids before
each source line, and `target_start`, the ids each output is forced to begin with), or the
engine's defaults that load_engine sets when it builds the engine."""

from __future__ import annotations

from translator.errors import UserError


def language_codes(source: dict | None) -> dict[str, int] | None:
    """code -> translator id of a checkpoint's `source` record or an export's manifest
    (None: a model without)."""
    codes = (source or {}).get("languages")
    if not isinstance(codes, dict) or not codes:
        return None
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in codes.items()):
        raise UserError("key 'source.languages' must map language codes to ids")
    return codes


def code_id(codes: dict[str, int], lang: str, option: str) -> int:
    """The id of `lang`'s code; an unknown one is a one-line error listing the model's."""
    if lang not in codes:
        raise UserError(
            f"{option} {lang}: not a language of this model; its languages: {', '.join(codes)}"
        )
    return codes[lang]


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
    src = code_id(codes, src_lang or data.src_lang, options[0])
    tgt = code_id(codes, tgt_lang or data.tgt_lang, options[1])
    return [src], [tgt]
