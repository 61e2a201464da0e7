"""The settings an export carries: the checkpoint's saved config with `--set` overrides of
its data and decode settings. The model's layout is the checkpoint's, so an override of it
(model.*, tokenizer.*) is refused rather than ignored; the languages of a model with
language codes (NLLB-200, M2M100, multilingual OPUS-MT) are read as its codes, in any
spelling (`fr` for `fra_Latn`), as `translate --tgt-lang` reads them."""

from __future__ import annotations

from translator.errors import UserError

LAYOUT = ("model", "tokenizer")  # the sections that describe the weights


def exported_config(ckpt, cfg, checkpoint, overrides: list[str] | None):
    """`cfg` (the checkpoint's, as built) with `overrides` (KEY=VALUE) applied."""
    from translator.config import config_from_dict
    from translator.engines.lang_codes import language_codes, model_code

    if not overrides:
        return cfg
    keys = [item.split("=", 1)[0].strip() for item in overrides]
    for key in keys:
        if key.split(".", 1)[0] in LAYOUT:
            raise UserError(
                f"--set {key}: an export keeps the model the checkpoint holds",
                "--set changes the data and decode settings it carries",
            )
    cfg = config_from_dict(cfg.to_dict(), f"{checkpoint} (saved config)", overrides)
    codes = language_codes(ckpt.source)
    if codes is None:
        return cfg
    named = {}
    for key in ("src_lang", "tgt_lang"):
        if f"data.{key}" in keys and not (key == "src_lang" and codes.at == "source"):
            named[key] = model_code(codes, getattr(cfg.data, key), f"--set data.{key}")
    return cfg.model_copy(update={"data": cfg.data.model_copy(update=named)}) if named else cfg
