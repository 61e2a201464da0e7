"""The language codes of M2M100Tokenizer folders, which list them nowhere: fairseq's
M2M100 releases fix them by name (tokenizer_config.json `language_codes`), in this order,
as the pieces __xx__ at ids len(vocab.json) + i (transformers' tokenization_m2m_100.py
holds the same lists); the embedding rows after them (fairseq's "made-up words") are no
token's."""

from __future__ import annotations

LANGUAGE_CODES = {
    "m2m100": (
        "af am ar ast az ba be bg bn br bs ca ceb cs cy da de el en es et fa ff fi fr fy ga "
        "gd gl gu ha he hi hr ht hu hy id ig ilo is it ja jv ka kk km kn ko lb lg ln lo lt "
        "lv mg mk ml mn mr ms my ne nl no ns oc or pa pl ps pt ro ru sd si sk sl so sq sr "
        "ss su sv sw ta th tl tn tr uk ur uz vi wo xh yi yo zh zu"
    ).split(),
    "wmt21": "en ha is ja cs ru zh de".split(),
}


def lang_piece(code: str) -> str:
    return f"__{code}__"
