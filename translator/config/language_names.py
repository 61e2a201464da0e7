"""Language codes in their several spellings: a config's `de`, OPUS-MT's `deu`, NLLB's
`deu_Latn`, LibreTranslate's `de` and `zt`, a user's `de-AT`. Each of a model's codes gets
a two-letter code (ISO 639-1) of its own, and `Names.find` reads any of these spellings as
one of the model's codes.

Where two of the model's codes share a two-letter code (NLLB's `zho_Hans` and `zho_Hant`),
the first keeps it and the other gets `zh-Hant` (its script); every model code stays
usable as given. Imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

# ISO 639-3 (and NLLB's individual-language codes) -> (ISO 639-1, English name)
_TABLE = """
afr af Afrikaans|amh am Amharic|arb ar Arabic|ara ar Arabic|asm as Assamese|azj az Azerbaijani
aze az Azerbaijani|bak ba Bashkir|bel be Belarusian|ben bn Bengali|bod bo Tibetan
bos bs Bosnian|bre br Breton|bul bg Bulgarian|cat ca Catalan|ces cs Czech|cym cy Welsh
dan da Danish|deu de German|ell el Greek|eng en English|epo eo Esperanto|est et Estonian
ekk et Estonian|eus eu Basque|fao fo Faroese|fas fa Persian|pes fa Persian|fin fi Finnish
fra fr French|fry fy Western Frisian|gle ga Irish|gla gd Scottish Gaelic|glg gl Galician
guj gu Gujarati|hau ha Hausa|heb he Hebrew|hin hi Hindi|hrv hr Croatian|hun hu Hungarian
hye hy Armenian|ibo ig Igbo|ind id Indonesian|isl is Icelandic|ita it Italian
jpn ja Japanese|jav jv Javanese|kat ka Georgian|kaz kk Kazakh|khm km Khmer|kan kn Kannada
kor ko Korean|kir ky Kyrgyz|lat la Latin|ltz lb Luxembourgish|lao lo Lao|lit lt Lithuanian
lav lv Latvian|lvs lv Latvian|mlg mg Malagasy|plt mg Malagasy|mri mi Maori
mkd mk Macedonian|mal ml Malayalam|mon mn Mongolian|khk mn Mongolian|mar mr Marathi
msa ms Malay|zsm ms Malay|mlt mt Maltese|mya my Burmese|nob nb Norwegian Bokmal
nep ne Nepali|npi ne Nepali|nld nl Dutch|nno nn Norwegian Nynorsk|nor no Norwegian
oci oc Occitan|ori or Odia|ory or Odia|pan pa Punjabi|pol pl Polish|pus ps Pashto
pbt ps Pashto|por pt Portuguese|ron ro Romanian|rus ru Russian|san sa Sanskrit
sin si Sinhala|slk sk Slovak|slv sl Slovenian|som so Somali|spa es Spanish|sqi sq Albanian
als sq Albanian|srp sr Serbian|sun su Sundanese|swe sv Swedish|swa sw Swahili
swh sw Swahili|tam ta Tamil|tel te Telugu|tgk tg Tajik|tha th Thai|tgl tl Tagalog
tur tr Turkish|tat tt Tatar|uig ug Uyghur|ukr uk Ukrainian|urd ur Urdu|uzb uz Uzbek
uzn uz Uzbek|vie vi Vietnamese|xho xh Xhosa|yid yi Yiddish|ydd yi Yiddish|yor yo Yoruba
zho zh Chinese|cmn zh Chinese|yue yue Cantonese|zul zu Zulu
"""
ISO3 = {
    three: (two, name)
    for entry in _TABLE.replace("\n", "|").split("|")
    if entry.strip()
    for three, two, name in [entry.split(" ", 2)]
}
NAMES = {two: name for two, name in ISO3.values()}
# the codes LibreTranslate took from its Argos models and still reads (language.iso2model),
# and Chinese regions whose script a fallback to `zh` alone would get wrong
ALIASES = {"zt": "zh-hant", "pb": "pt-br", "zh-tw": "zh-hant", "zh-hk": "zh-hant",
           "zh-mo": "zh-hant", "zh-cn": "zh-hans", "zh-sg": "zh-hans"}  # fmt: skip


def short_code(model_code: str) -> tuple[str, str]:
    """(LibreTranslate's code, the script or "" ) of one of the model's codes."""
    base, _, script = model_code.partition("_")
    if base in ISO3:
        return ISO3[base][0], script
    return model_code, ""


@dataclass(frozen=True)
class Language:
    code: str  # LibreTranslate's code
    model: str  # the model's own code
    name: str


def named_languages(model_codes: list[str]) -> list[Language]:
    """Each model code with a LibreTranslate code of its own (module docstring)."""
    found: list[Language] = []
    taken: set[str] = set(model_codes)
    for model in model_codes:
        code, script = short_code(model)
        if code != model and code in taken:
            code = f"{code}-{script}" if script and f"{code}-{script}" not in taken else model
        taken.add(code)
        name = NAMES.get(code.split("-")[0], model)
        shown = f"{name} ({script})" if script and code.endswith(f"-{script}") else name
        found.append(Language(code, model, shown))
    return found


class Names:
    """Reads a language named in any spelling as one of `languages` (named_languages)."""

    def __init__(self, languages: list[Language]):
        self._named = {lang.code.lower(): lang for lang in languages}
        self._named.update({lang.model.lower(): lang for lang in languages})

    def find(self, code: str) -> Language | None:
        """The language `code` names: the two-letter code (LibreTranslate's older `zt` and
        `pb` too), the three-letter one or the model's, any case; a regional variant
        (`pt-BR`) falls back to its language, a Chinese one (`zh-TW`) to its script's."""
        key = code.strip().lower().replace("_", "-")
        key = ALIASES.get(key, key) if key not in self._named else key
        tags = key.split("-")  # zh-hant-tw, then zh-hant, then zh
        tags[0] = ISO3[tags[0]][0] if tags[0] in ISO3 and key not in self._named else tags[0]
        shorter = ["-".join(tags[:n]) for n in range(len(tags), 0, -1)]
        for name in (code.strip().lower(), *shorter):
            if name in self._named:
                return self._named[name]
        return None
