"""The files of a Hugging Face export beside its weights (pretrained/export_hf.py): the
tokenizer's (MarianTokenizer's, or an imported NLLB model's own), the card and the
licence, and the JSON writer they share."""

from __future__ import annotations

import json
from pathlib import Path

from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.specials import BOS


def piece_vocab(side, ids: list[int], tags: dict[str, str]) -> dict[str, int]:
    """vocab.json of one side: piece -> exported id. Where two translator ids share an
    exported id (an imported Marian's <pad> and <s>) the first names it."""
    vocab: dict[str, int] = {}
    taken: set[int] = set()
    for i in range(side.get_piece_size()):
        if ids[i] in taken or (i == BOS and ids.count(ids[i]) > 1):
            continue  # (an imported model's <s>: the id's own piece names it)
        piece = side.id_to_piece(i)
        piece = tags.get(piece, piece)
        if piece in vocab:
            raise UserError(f"the piece {piece!r} stands at two ids, which vocab.json cannot hold")
        vocab[piece] = ids[i]
        taken.add(ids[i])
    return vocab


# ---------------------------------------------------------------- the folder


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_tokenizer(tmp: Path, tokenizer, src_ids: list, tgt_ids: list, cfg, own: bool) -> None:
    """MarianTokenizer's files; `own`: translator's ids, whose <s> is a token of its own."""
    from translator.config.languages import lang_tags, source_languages, target_languages

    tags = {t: f">>{t[2:-1]}<<" for t in lang_tags(cfg.data)}
    shared = tokenizer.joint if tokenizer.vocab is None else tokenizer.vocab["tgt"] is None
    (tmp / "source.spm").write_bytes(tokenizer.src_bytes)
    (tmp / "target.spm").write_bytes(tokenizer.tgt_bytes or tokenizer.src_bytes)
    write_json(tmp / "vocab.json", piece_vocab(tokenizer.src, src_ids, tags))
    if not shared:
        tgt_vocab = piece_vocab(tokenizer.tgt, tgt_ids, tags)
        write_json(tmp / "target_vocab.json", tgt_vocab)
    specials = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}
    if own:
        specials["bos_token"] = "<s>"
    write_json(tmp / "special_tokens_map.json", specials)
    write_json(
        tmp / "tokenizer_config.json",
        {
            "tokenizer_class": "MarianTokenizer",
            "source_lang": _one_or_mul(source_languages(cfg.data)),
            "target_lang": _one_or_mul(target_languages(cfg.data)),
            "separate_vocabs": not shared,
            "model_max_length": cfg.model.max_positions,
            **specials,
        },
    )


def _one_or_mul(langs: list[str]) -> str:
    """A side's language as Marian's tokenizer_config names it: several are "mul", as in
    OPUS-MT's multilingual releases."""
    return langs[0] if len(langs) == 1 else "mul"


def write_nllb_tokenizer(tmp: Path, tokenizer, source: dict, data) -> None:
    """An imported M2M100/NLLB model's tokenizer as it came: the files of its ids that the
    import kept (tokenizer.json, vocab.json), the sentencepiece model, and
    tokenizer_config.json naming the checkpoint's default languages (`data`)."""
    from translator.pretrained.m2m100 import TOKENIZER_FILES

    (tmp / "sentencepiece.bpe.model").write_bytes(tokenizer.src_bytes)
    kept = source.get("tokenizer_files")
    for name, text in (kept if isinstance(kept, dict) else {}).items():
        if name in TOKENIZER_FILES and isinstance(text, str):
            (tmp / name).write_text(text, encoding="utf-8")
    if not kept:
        _check_rebuilt_ids(tokenizer, source)
    config = dict(source.get("tokenizer_config") or {})
    for key in ("is_local", "local_files_only", "name_or_path"):  # where it was read from
        config.pop(key, None)
    config.setdefault("tokenizer_class", "NllbTokenizer")
    config.setdefault("extra_special_tokens", list(source.get("languages") or {}))
    for key in ("src_lang", "tgt_lang"):  # the checkpoint's default languages
        if getattr(data, key) in (source.get("languages") or {}):
            config[key] = getattr(data, key)
    write_json(tmp / "tokenizer_config.json", config)


def _check_rebuilt_ids(tokenizer, source: dict) -> None:
    """Without the released tokenizer.json, transformers rebuilds the ids from the
    sentencepiece model: its pieces, <mask>, then the codes in order. A model whose codes
    sit elsewhere (NLLB-200's come before <mask>) would be read with the wrong codes."""
    import sentencepiece

    size = sentencepiece.SentencePieceProcessor(model_proto=tokenizer.src_bytes).get_piece_size()
    hf_ids = source.get("ids", {}).get("src") or []
    codes = source.get("languages") or {}
    if any(hf_ids[tid] != size + 2 + k for k, tid in enumerate(codes.values())):
        raise UserError(
            "this checkpoint lacks the released tokenizer's files (tokenizer.json, vocab.json), "
            "and its language codes are not where transformers would rebuild them; import the "
            "model folder again"
        )


def card_files(source: dict | None) -> dict[str, str]:
    """An imported model's card and licence files (checkpoint `source`): name -> text, for
    the names pretrained/files.py's card() reads (README.md, LICENSE*, LICENCE*) alone."""
    files = (source or {}).get("files")
    return {
        name: text
        for name, text in (files.items() if isinstance(files, dict) else ())
        if isinstance(text, str)
        and name == Path(name).name
        and (name.upper() == "README.MD" or name.upper().startswith(("LICENSE", "LICENCE")))
    }


def write_card(tmp: Path, ckpt: Checkpoint, cfg, cls: str) -> None:
    """The imported model's card and licence files as they came; for translator's own model
    a short README.md naming translator, the languages and the model config."""
    files = card_files(ckpt.source)
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    if files:
        return
    import yaml

    from translator.config.languages import lang_tags, source_languages, target_languages

    src, tgt = source_languages(cfg.data), target_languages(cfg.data)
    codes = [f">>{t[2:-1]}<<" for t in lang_tags(cfg.data)]
    text = CARD.format(
        languages="\n".join(f"- {lang}" for lang in dict.fromkeys(src + tgt)),
        src=", ".join(src),
        tgt=", ".join(tgt),
        type=cfg.model.type,
        cls=cls,
        codes=f" A line starts with its target language's code: {', '.join(codes)}."
        if codes
        else "",
        line=f"{codes[0]} " if codes else "",
        config=yaml.safe_dump(cfg.model.to_dict(), sort_keys=False).strip(),
    )
    (tmp / "README.md").write_text(text, encoding="utf-8")


CARD = """---
library_name: transformers
pipeline_tag: translation
language:
{languages}
tags:
- translation
- translator
---
# {src} -> {tgt} ({type})

A translation model from {src} to {tgt}, trained with translator and exported by `translator
export --format huggingface` as transformers' `{cls}` with a `MarianTokenizer`.{codes}

```python
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("THIS_FOLDER")
model = AutoModelForSeq2SeqLM.from_pretrained("THIS_FOLDER")
batch = tokenizer(["{line}A sentence to translate."], return_tensors="pt")
print(tokenizer.batch_decode(model.generate(**batch), skip_special_tokens=True))
```

## Model config (translator)

```yaml
{config}
```
"""
