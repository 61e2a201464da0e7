"""The settings an export carries: the checkpoint's saved config with `--set` overrides of
its data and decode settings. The model and its training are the checkpoint's, so an
override of any other key (model.*, tokenizer.*, train.*) is refused rather than ignored; the languages of a model with
language codes (NLLB-200, M2M100, multilingual OPUS-MT) are read as its codes, in any
spelling (`fr` for `fra_Latn`), as `translate --tgt-lang` reads them."""

from __future__ import annotations


def exported_config(ckpt, cfg, checkpoint, overrides: list[str] | None):
    """`cfg` (the checkpoint's, as built) with `overrides` (KEY=VALUE) applied."""
    from translator.config import config_from_dict
    from translator.config.overrides import refuse_other_sections
    from translator.engines.lang_codes import language_codes, model_code

    if not overrides:
        return cfg
    refuse_other_sections(overrides, ("data", "decode"), "export")
    keys = [item.split("=", 1)[0].strip() for item in overrides]
    cfg = config_from_dict(cfg.to_dict(), f"{checkpoint} (saved config)", overrides)
    codes = language_codes(ckpt.source)
    if codes is None:
        return cfg
    named = {}
    for key in ("src_lang", "tgt_lang"):
        if f"data.{key}" in keys and not (key == "src_lang" and codes.at == "source"):
            named[key] = model_code(codes, getattr(cfg.data, key), f"--set data.{key}")
    return cfg.model_copy(update={"data": cfg.data.model_copy(update=named)}) if named else cfg
