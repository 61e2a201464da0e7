"""The built-in German->English demo corpus: a seeded grammar, no downloads.

The grammar is small enough that a tiny model learns it in minutes on a CPU, but it keeps what
makes German->English more than word substitution: gender, case and adjective agreement, V2
inversion after a fronted adverbial, verb-final subordinate clauses, separable verbs, modals
that send the infinitive to the end, numbers with the units before the tens, and dates.
"""

from __future__ import annotations

import random
from itertools import accumulate

from translator.data.demo_lexicon import (  # noqa: F401 (re-exported for tests)
    _ADJECTIVES_FOR,
    _COLOR_WORDS,
    _MODALS,
    _MONTHS,
    _SAY_VERBS,
    _VERB_CUM_WEIGHTS,
    _WEEKDAYS,
    ADJECTIVES,
    NOUNS,
    VERBS,
    Noun,
    _tags,
    number_words,
    ordinal_words,
)
from translator.errors import UserError


def _time_adverbial(rng: random.Random) -> tuple[str, str]:
    roll = rng.random()
    if roll < 0.35:
        month, month_en, days = rng.choice(_MONTHS)
        de, en = ordinal_words(rng.randint(1, days))
        return f"am {de} {month}", f"on the {en} of {month_en}"
    if roll < 0.65:
        day, day_en = rng.choice(_WEEKDAYS)
        return f"am {day}", f"on {day_en}"
    if roll < 0.8:
        hour = rng.randint(1, 12)
        de, en = number_words(hour)
        return f"um {'ein' if hour == 1 else de} Uhr", f"at {en} o'clock"
    if roll < 0.9:
        month, month_en, _ = rng.choice(_MONTHS)
        return f"im {month}", f"in {month_en}"
    return rng.choice([("heute", "today"), ("morgen", "tomorrow")])


# --- Noun phrases ----------------------------------------------------------------------------

_SLOT = {"m": 0, "f": 1, "n": 2}  # slot 3 is the plural, which has no gender
_DEFINITE = {
    "nom": ("der", "die", "das", "die"),
    "acc": ("den", "die", "das", "die"),
    "dat": ("dem", "der", "dem", "den"),
}
_EIN_ENDINGS = {
    "nom": ("", "e", "", "e"),
    "acc": ("en", "e", "", "e"),
    "dat": ("em", "er", "em", "en"),
}
# strong adjective endings: the adjective shows the case when no article ending does
_STRONG = {
    "nom": ("er", "e", "es", "e"),
    "acc": ("en", "e", "es", "e"),
    "dat": ("em", "er", "em", "en"),
}
_EIN_WORDS = {
    "indef": ("ein", "a"),
    "kein": ("kein", "no"),
    "mein": ("mein", "my"),
    "unser": ("unser", "our"),
}


def noun_phrase(
    noun: str,
    case: str,
    det: str | int = "def",
    plural: bool = False,
    adjectives: tuple[str, ...] = (),
) -> tuple[str, str]:
    """Inflect a noun phrase; ``det`` is "def", "indef", "kein", "mein", "unser" or a count.

    ``noun_phrase("Hund", "acc", "indef", adjectives=("groß",)) -> ("einen großen Hund",
    "a big dog")``. A count (2-99) makes the phrase plural; "indef" in the plural is the bare
    plural ("große Hunde", "big dogs").
    """
    entry = NOUNS[noun]
    plural = plural or isinstance(det, int)
    slot = 3 if plural else _SLOT[entry.gender]
    if isinstance(det, int):
        (article, article_en), strong = number_words(det), True
    elif det == "def":
        article, article_en, strong = _DEFINITE[case][slot], "the", False
    elif det == "indef" and plural:
        article, article_en, strong = "", "", True
    else:
        stem, article_en = _EIN_WORDS[det]
        article, strong = stem + _EIN_ENDINGS[case][slot], not _EIN_ENDINGS[case][slot]
    weak = "e" if (case == "nom" and slot < 3) or (case == "acc" and slot in (1, 2)) else "en"
    ending = _STRONG[case][slot] if strong else weak
    # adjectives ending in -e (müde) do not double it: müde, müden, müder
    de_adjs = [a + (ending[1:] if a.endswith("e") else ending) for a in adjectives]
    head = entry.de_pl if plural else entry.de
    if plural and case == "dat" and head[-1] not in "ns":
        head += "n"  # den Hunden, den Kindern, but den Autos
    en_words = [ADJECTIVES[a][0] for a in adjectives] + [entry.en_pl if plural else entry.en]
    if article_en == "a" and en_words[0][0] in "aeiou":
        article_en = "an"
    return _join(article, *de_adjs, head), _join(article_en, *en_words)


def _join(*words: str) -> str:
    return " ".join([w for w in words if w])


_pools: dict[frozenset[str], tuple[list[Noun], list[float]]] = {}


def _pick_noun(rng: random.Random, tags: frozenset[str], avoid: str) -> Noun:
    if tags not in _pools:
        nouns = [n for n in NOUNS.values() if "any" in tags or n.tags & tags]
        _pools[tags] = nouns, list(accumulate(n.weight for n in nouns))
    while True:  # "the dog sees the dog" reads like a generator bug
        noun = rng.choices(_pools[tags][0], cum_weights=_pools[tags][1])[0]
        if noun.de != avoid:
            return noun


def _random_np(
    rng: random.Random,
    tags: frozenset[str],
    case: str,
    rich: float,
    adjunct: bool = False,
    avoid: str = "",
) -> tuple[str, str, bool, str]:
    """(german, english, plural, noun); ``rich`` (0-1) scales how much decoration it gets."""
    noun = _pick_noun(rng, tags, avoid)
    # counts and "kein" inside a place adjunct ("on no bridge") are grammatical but unnatural
    plural = rng.random() < (0.1 if adjunct else 0.15 + 0.2 * rich)
    if plural:
        det = rng.choices(
            ["def", "indef", "kein", "mein", "unser", "count"],
            weights=[4, 3, 1 - adjunct, 1, 1, 3 - 3 * adjunct],
        )[0]
        if det == "count":
            det = rng.randint(2, 12) if rng.random() < 0.6 else rng.randint(13, 99)
    else:
        det = rng.choices(
            ["def", "indef", "kein", "mein", "unser"],
            weights=[5, 5, rich * (1 - adjunct), rich, rich],
        )[0]
    if det in ("mein", "unser") and noun.de in ("Mann", "Frau"):
        det = "def"  # "mein Mann" means "my husband"
    adjectives = []
    if rng.random() < 0.6 * rich:
        fits = _ADJECTIVES_FOR[noun.de]
        adjectives.append(rng.choice(fits))
        colors = [a for a in fits if a in _COLOR_WORDS]
        if adjectives[0] not in _COLOR_WORDS and colors and rng.random() < 0.25:
            adjectives.append(rng.choice(colors))  # size before colour in both languages
    de, en = noun_phrase(noun.de, case, det, plural, tuple(adjectives))
    return de, en, plural, noun.de


_LOCATIVES = [
    ("in", "in", _tags("place")),
    ("auf", "on", _tags("surface")),
    ("neben", "next to", _tags("landmark")),
    ("hinter", "behind", _tags("landmark")),
    ("vor", "in front of", _tags("landmark")),
]


def _adjuncts(rng: random.Random, rich: float, avoid: str) -> list[tuple[str, str]]:
    """An optional "mit" phrase, then an optional place: the usual German order."""
    out = []
    if rng.random() < 0.2 * rich:
        de, en, *_ = _random_np(rng, _tags("person,animal,toy"), "dat", rich / 2, True, avoid)
        out.append((f"mit {de}", f"with {en}"))
    if rng.random() < 0.45 * rich:
        prep, prep_en, tags = rng.choice(_LOCATIVES)
        de, en, *_ = _random_np(rng, tags, "dat", rich / 2, True, avoid)
        if prep == "in" and de.startswith("dem "):  # the contraction is the unmarked form
            out.append(("im " + de[4:], f"in {en}"))
        else:
            out.append((f"{prep} {de}", f"{prep_en} {en}"))
    return out


# --- Clauses and sentences -------------------------------------------------------------------


def _clause(rng: random.Random, rich: float, order: str = "main") -> tuple[str, str]:
    """One clause. ``order`` is "main" (verb second, sometimes after a fronted time adverbial),
    "inverted" (verb first, after a fronted subordinate clause) or "sub" (verb last)."""
    verb = rng.choices(VERBS, cum_weights=_VERB_CUM_WEIGHTS)[0]
    subj, subj_en, plural, subj_noun = _random_np(rng, verb.subj, "nom", rich)
    obj, obj_en = "", ""
    if verb.obj:
        obj, obj_en, *_ = _random_np(rng, verb.obj, "acc", rich, avoid=subj_noun)
    adjuncts = _adjuncts(rng, rich, subj_noun)
    time, time_en = _time_adverbial(rng) if rng.random() < 0.4 * rich else ("", "")
    modal = rng.choice(_MODALS) if rng.random() < 0.15 * rich else None
    i = int(plural)
    if modal:
        finite, rest, verb_en = modal[i], verb.particle + verb.de_pl, f"{modal[2 + i]} {verb.en_pl}"
    else:
        finite, rest, verb_en = (verb.de, verb.de_pl)[i], verb.particle, (verb.en, verb.en_pl)[i]
    middle = [obj, *(de for de, _ in adjuncts)]
    en = _join(subj_en, verb_en, obj_en, *(en for _, en in adjuncts))
    if order == "sub":
        cluster = f"{rest} {finite}" if modal else rest + finite  # "anrufen will", "anruft"
        return _join(subj, time, *middle, cluster), _join(en, time_en)
    if order == "inverted":
        return _join(finite, subj, time, *middle, rest), _join(en, time_en)
    if time and rng.random() < 0.5:
        return _join(time, finite, subj, *middle, rest), _join(time_en, en)
    return _join(subj, finite, time, *middle, rest), _join(en, time_en)


# conjunction, English, English comma before it when the clause follows the main clause
_SUBORDINATORS = [
    ("weil", "because", ""),
    ("wenn", "when", ""),
    ("obwohl", "although", ","),
    ("während", "while", ","),
]


def _with_subordinate(rng: random.Random, rich: float) -> tuple[str, str]:
    conj, conj_en, comma = rng.choice(_SUBORDINATORS)
    sub, sub_en = _clause(rng, rich, "sub")
    if rng.random() < 0.3:  # the fronted clause fills the first slot, so the verb comes next
        main, main_en = _clause(rng, rich, "inverted")
        return f"{conj} {sub}, {main}", f"{conj_en} {sub_en}, {main_en}"
    main, main_en = _clause(rng, rich)
    return f"{main}, {conj} {sub}", f"{main_en}{comma} {conj_en} {sub_en}"


def _reported(rng: random.Random, rich: float) -> tuple[str, str]:
    verb, verb_pl, verb_en, verb_en_pl = rng.choice(_SAY_VERBS)
    subj, subj_en, plural, _ = _random_np(rng, _tags("person"), "nom", rich)
    sub, sub_en = _clause(rng, rich, "sub")
    verb, verb_en = (verb_pl, verb_en_pl) if plural else (verb, verb_en)
    return f"{subj} {verb}, dass {sub}", f"{subj_en} {verb_en} that {sub_en}"


def _coordinated(rng: random.Random, parts: int, rich: float) -> tuple[str, str]:
    pieces = [_clause, _clause, _with_subordinate, _with_subordinate, _reported]
    de, en = rng.choice(pieces)(rng, rich)
    for _ in range(parts - 1):
        nxt, nxt_en = rng.choice(pieces)(rng, rich)
        if rng.random() < 0.6:  # a comma before "und" only closes a subordinate clause
            comma = "," if "," in de else ""
            de, en = f"{de}{comma} und {nxt}", f"{en}{comma} and {nxt_en}"
        else:
            de, en = f"{de}, aber {nxt}", f"{en}, but {nxt_en}"
    return de, en


MAX_TOKENS = 56


def _sentence(rng: random.Random) -> tuple[str, str]:
    roll = rng.random()
    if roll < 0.25:
        de, en = _clause(rng, 0.0)  # "Ein Hund läuft.", "Ein Mann liest ein Buch."
    elif roll < 0.55:
        de, en = _clause(rng, 1.0)
    elif roll < 0.73:
        de, en = _with_subordinate(rng, 0.7)
    elif roll < 0.81:
        de, en = _reported(rng, 0.7)
    elif roll < 0.95:
        de, en = _coordinated(rng, 2, 0.6)
    else:
        de, en = _coordinated(rng, rng.randint(3, 4), 0.8)
    if de.count(" ") >= MAX_TOKENS or en.count(" ") >= MAX_TOKENS:
        return _sentence(rng)  # a rare runaway coordination would only inflate padding
    return de[0].upper() + de[1:] + ".", en[0].upper() + en[1:] + "."


# --- Public API ------------------------------------------------------------------------------


def generate_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (german, english) sentence pairs, deterministic for a given seed."""
    if n < 0:
        raise UserError(f"cannot generate {n} demo pairs")
    rng = random.Random(seed)
    return [_sentence(rng) for _ in range(n)]


def demo_splits(train: int, dev: int, test: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    """{'train': [...], 'dev': [...], 'test': [...]} with no dev/test German sentence in train.

    Train is exactly ``generate_pairs(train, seed)``, repeats included, so frequent short
    sentences such as "Ein Hund läuft." stay in it. Dev and test continue the same random
    stream and keep only German sentences not seen before, so they measure generalisation.
    """
    if min(train, dev, test) < 0:
        raise UserError(f"split sizes must be non-negative, got {train}/{dev}/{test}")
    rng = random.Random(seed)
    splits = {"train": [_sentence(rng) for _ in range(train)]}
    seen = {de for de, _ in splits["train"]}
    for name, size in (("dev", dev), ("test", test)):
        pairs = splits[name] = []
        for _ in range(50 * size + 1000):
            if len(pairs) == size:
                break
            pair = _sentence(rng)
            if pair[0] not in seen:
                seen.add(pair[0])
                pairs.append(pair)
        if len(pairs) < size:
            raise UserError(
                f"could not draw {size} unseen {name} sentences", "ask for fewer demo pairs"
            )
    return splits
