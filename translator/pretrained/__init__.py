"""Released models as translator checkpoints: `import_pretrained` reads a model folder (or
fetches a Hugging Face hub name) and writes an ordinary, self-contained checkpoint.

Each kind of release is a module with
    NAME        what the line printed after an import calls it
    SUPPORTED   what it reads, for the error that lists what translator imports
    recognises(folder) -> bool
    import_folder(folder, origin) -> Checkpoint
and KINDS lists the modules, asked in order."""

from __future__ import annotations

from pathlib import Path

from translator.errors import UserError
from translator.fileio import writable_file

KINDS = ("marian", "marian_npz", "m2m100")


def _kinds():
    from importlib import import_module

    return [import_module(f"translator.pretrained.{name}") for name in KINDS]


def importer(folder: Path):
    """The module that reads `folder`; a folder no kind recognises is a one-line error that
    says what was found and what is supported."""
    from translator.pretrained.files import read_json

    kinds = _kinds()
    for kind in kinds:
        if kind.recognises(folder):
            return kind
    config = read_json(folder, "config.json", required=False)
    if config is None:
        found = "config.json is missing, and no other model file was recognised"
    else:
        found = config.get("architectures") or config.get("model_type") or "no architecture"
        found = f"config.json describes {found}"
    supported = "; ".join(kind.SUPPORTED for kind in kinds)
    raise UserError(f"{folder}: {found}; translator imports {supported}")


def import_pretrained(
    source: str, output: Path, src_lang: str | None = None, tgt_lang: str | None = None
) -> str:
    """Write the checkpoint of `source` to `output`, its default languages `src_lang` and
    `tgt_lang` where given; a line saying what was written."""
    from translator.pretrained.files import released_decoding, resolve

    check_output(output)
    try:  # a models/ folder of its own, as `export --output` makes one
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot write {output}: {output.parent}: {err.strerror}") from None
    writable_file(output)
    folder, origin = resolve(source)
    try:
        kind = importer(folder)
        ckpt = kind.import_folder(folder, origin)
        ckpt.config = _with_decoding(ckpt.config, released_decoding(folder))
    except UserError as err:  # a .zip's temporary folder named as the .zip
        if "file" not in origin:
            raise
        raise UserError(err.message.replace(str(folder), source), err.hint) from None
    ckpt.config = _with_languages(ckpt, src_lang, tgt_lang)
    ckpt.save(output)
    model, data = ckpt.config["model"], ckpt.config["data"]
    said = (
        f"imported {source} ({kind.NAME}, {model['enc_layers']}+{model['dec_layers']} layers, "
        f"d_model {model['d_model']}, vocabulary {ckpt.config['tokenizer']['vocab_size']}) "
        f"into {output}"
    )
    dc = ckpt.config["decode"]  # the release's ranking, which may not be where it came from
    said += (
        f"; decoding as the release ranks: beam {dc['beam']}, decode.len_norm "
        f"{dc['len_norm']}, decode.len_penalty {dc['len_penalty']:g}"
    )
    codes = ckpt.source.get("languages") or {}
    if codes and data["tgt_lang"] not in codes:
        said += "; it names no target language: give --tgt-lang to translate, eval and serve"
    return said


def _with_languages(ckpt, src_lang: str | None, tgt_lang: str | None) -> dict:
    """The checkpoint's config with the default languages given; each must be one of the
    model's codes, in any spelling (a one-line error lists them)."""
    from translator.config import config_from_dict
    from translator.engines.lang_codes import language_codes, model_code

    if src_lang is None and tgt_lang is None:
        return ckpt.config
    codes = language_codes(ckpt.source)
    data = dict(ckpt.config["data"])
    if codes is None:
        raise UserError(
            f"--src-lang/--tgt-lang: this model has no language codes to choose from; it "
            f"translates {data['src_lang']} into {data['tgt_lang']}"
        )
    if src_lang is not None and codes.at == "source":
        raise UserError("--src-lang: this model's sources carry no language code; give "
                        "--tgt-lang alone")  # fmt: skip
    for option, key, lang in (
        ("--src-lang", "src_lang", src_lang),
        ("--tgt-lang", "tgt_lang", tgt_lang),
    ):
        if lang is not None:
            data[key] = model_code(codes, lang, option)
    return config_from_dict({**ckpt.config, "data": data}, "--src-lang/--tgt-lang").to_dict()


def check_output(output: Path) -> None:
    """An existing --output is replaced only where it is a checkpoint `translator import`
    wrote and nothing trained since; any other file, a model fine-tuned from an import
    among them (it keeps the import's record), is refused."""
    from translator.models.checkpoint import check_replaceable

    check_replaceable(output, "--output", "import", lambda c: isinstance(c.get("source"), dict))


def _with_decoding(config: dict, decode: dict) -> dict:
    """`config` with the release's decoding settings, checked as a config file's would be."""
    from translator.config import config_from_dict

    raw = {**config, "decode": {**config.get("decode", {}), **decode}}
    return config_from_dict(raw, "the imported model's config").to_dict()
