"""The built-in demo corpus: determinism, splits, and the German grammar it promises."""

import re
import statistics

import pytest

from translator.data.demo import (
    ADJECTIVES,
    NOUNS,
    VERBS,
    demo_splits,
    generate_pairs,
    noun_phrase,
    number_words,
    ordinal_words,
)
from translator.errors import UserError

MODALS = {"kann", "können", "will", "wollen", "muss", "müssen"}
# what may end a verb-final clause: a finite verb, with its separable prefix glued on
CLAUSE_FINAL = {v.particle + form for v in VERBS for form in (v.de, v.de_pl)} | MODALS
FINITE = {form for v in VERBS for form in (v.de, v.de_pl)} | MODALS
WEEKDAYS = dict(
    zip(
        "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag".split(),
        "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
        strict=True,
    )
)
MONTHS = dict(
    zip(
        "Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split(),
        "January February March April May June July August September October November December".split(),
        strict=True,
    )
)


@pytest.fixture(scope="module")
def pairs():
    return generate_pairs(20_000, seed=0)


def words(sentence):
    return [w.strip(".,") for w in sentence.split()]


# --- determinism and splits ------------------------------------------------------------------


def test_same_seed_same_pairs_and_other_seed_other_pairs():
    assert generate_pairs(300, seed=7) == generate_pairs(300, seed=7)
    assert generate_pairs(300, seed=7) != generate_pairs(300, seed=8)
    assert generate_pairs(0, seed=7) == []


def test_splits_have_requested_sizes_and_no_leak_into_train():
    splits = demo_splits(train=2000, dev=300, test=300, seed=3)
    assert {name: len(p) for name, p in splits.items()} == {"train": 2000, "dev": 300, "test": 300}
    train = {de for de, _ in splits["train"]}
    dev = [de for de, _ in splits["dev"]]
    test = [de for de, _ in splits["test"]]
    assert not train & set(dev) and not train & set(test) and not set(dev) & set(test)
    assert len(set(dev)) == len(dev) and len(set(test)) == len(test)
    assert splits == demo_splits(train=2000, dev=300, test=300, seed=3)
    assert splits["train"] == generate_pairs(2000, seed=3)  # so the demo sentences stay in train


def test_bad_sizes_are_user_errors():
    with pytest.raises(UserError):
        demo_splits(train=10, dev=-1, test=5, seed=0)
    with pytest.raises(UserError):
        generate_pairs(-3, seed=0)


# --- numbers and dates -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "german", "english"),
    [
        (1, "eins", "one"),
        (7, "sieben", "seven"),
        (10, "zehn", "ten"),
        (11, "elf", "eleven"),
        (16, "sechzehn", "sixteen"),
        (17, "siebzehn", "seventeen"),
        (21, "einundzwanzig", "twenty-one"),
        (30, "dreißig", "thirty"),
        (47, "siebenundvierzig", "forty-seven"),
        (99, "neunundneunzig", "ninety-nine"),
        (100, "einhundert", "one hundred"),
        (101, "einhunderteins", "one hundred and one"),
        (347, "dreihundertsiebenundvierzig", "three hundred and forty-seven"),
    ],
)
def test_number_words(n, german, english):
    assert number_words(n) == (german, english)


@pytest.mark.parametrize(
    ("n", "german", "english"),
    [
        (1, "ersten", "first"),
        (2, "zweiten", "second"),
        (3, "dritten", "third"),
        (7, "siebten", "seventh"),
        (8, "achten", "eighth"),
        (12, "zwölften", "twelfth"),
        (16, "sechzehnten", "sixteenth"),
        (20, "zwanzigsten", "twentieth"),
        (21, "einundzwanzigsten", "twenty-first"),
        (30, "dreißigsten", "thirtieth"),
        (31, "einunddreißigsten", "thirty-first"),
    ],
)
def test_ordinal_words(n, german, english):
    assert ordinal_words(n) == (german, english)


def test_number_words_rejects_out_of_range():
    for bad in (0, 1000):
        with pytest.raises(ValueError):
            number_words(bad)


def test_numbers_and_dates_in_sentences_translate_consistently(pairs):
    cardinals = dict(number_words(n) for n in range(2, 100))
    ordinals = dict(ordinal_words(n) for n in range(1, 32))
    seen_number = seen_date = 0
    for de, en in pairs:
        for word in words(de.lower()):
            if word in cardinals:
                seen_number += 1
                assert cardinals[word] in en.lower().split(), (de, en)
        for day, month in re.findall(r"\b[Aa]m (\w+en) (\w+)", de):
            seen_date += 1
            assert f"the {ordinals[day]} of {MONTHS[month]}" in en, (de, en)
    assert seen_number > 100 and seen_date > 100


# --- agreement -------------------------------------------------------------------------------

NP_TABLE = [
    # noun, case, determiner, plural, adjectives -> German, English
    ("Hund", "nom", "def", False, ("groß",), "der große Hund", "the big dog"),
    ("Hund", "nom", "indef", False, ("groß",), "ein großer Hund", "a big dog"),
    ("Hund", "acc", "def", False, ("groß",), "den großen Hund", "the big dog"),
    ("Hund", "acc", "indef", False, ("groß",), "einen großen Hund", "a big dog"),
    ("Hund", "dat", "def", False, ("groß",), "dem großen Hund", "the big dog"),
    ("Hund", "dat", "indef", False, ("groß",), "einem großen Hund", "a big dog"),
    ("Frau", "nom", "indef", False, ("alt",), "eine alte Frau", "an old woman"),
    ("Frau", "acc", "def", False, ("alt",), "die alte Frau", "the old woman"),
    ("Frau", "dat", "def", False, ("alt",), "der alten Frau", "the old woman"),
    ("Frau", "dat", "indef", False, ("alt",), "einer alten Frau", "an old woman"),
    ("Auto", "nom", "def", False, ("rot",), "das rote Auto", "the red car"),
    ("Auto", "nom", "indef", False, ("rot",), "ein rotes Auto", "a red car"),
    ("Auto", "acc", "indef", False, ("rot",), "ein rotes Auto", "a red car"),
    ("Kind", "dat", "def", False, ("klein",), "dem kleinen Kind", "the small child"),
    ("Mann", "nom", "kein", False, ("müde",), "kein müder Mann", "no tired man"),
    ("Mann", "acc", "kein", False, ("müde",), "keinen müden Mann", "no tired man"),
    ("Kind", "nom", "mein", False, ("müde",), "mein müdes Kind", "my tired child"),
    (
        "Hund",
        "nom",
        "indef",
        False,
        ("groß", "schwarz"),
        "ein großer schwarzer Hund",
        "a big black dog",
    ),
    ("Ei", "acc", "indef", False, (), "ein Ei", "an egg"),
    ("Hund", "nom", "def", True, ("groß",), "die großen Hunde", "the big dogs"),
    ("Hund", "acc", "indef", True, ("groß",), "große Hunde", "big dogs"),
    ("Hund", "dat", "def", True, ("groß",), "den großen Hunden", "the big dogs"),
    ("Katze", "nom", "kein", True, (), "keine Katzen", "no cats"),
    ("Auto", "dat", "def", True, (), "den Autos", "the cars"),
    ("Hund", "nom", 3, False, ("klein",), "drei kleine Hunde", "three small dogs"),
    ("Kind", "dat", 21, False, (), "einundzwanzig Kindern", "twenty-one children"),
]


@pytest.mark.parametrize(("noun", "case", "det", "plural", "adjs", "german", "english"), NP_TABLE)
def test_noun_phrase_agreement(noun, case, det, plural, adjs, german, english):
    assert noun_phrase(noun, case, det, plural, adjs) == (german, english)


# determiner -> the adjective ending it demands, per gender of a singular noun
ARTICLE_ENDINGS = {
    "m": {
        "der": "e",
        "den": "en",
        "dem": "en",
        "im": "en",
        "ein": "er",
        "einen": "en",
        "einem": "en",
        "kein": "er",
        "keinen": "en",
        "keinem": "en",
        "mein": "er",
        "meinen": "en",
        "meinem": "en",
        "unser": "er",
        "unseren": "en",
        "unserem": "en",
    },
    "f": {
        "die": "e",
        "der": "en",
        "eine": "e",
        "einer": "en",
        "keine": "e",
        "keiner": "en",
        "meine": "e",
        "meiner": "en",
        "unsere": "e",
        "unserer": "en",
    },
    "n": {
        "das": "e",
        "dem": "en",
        "im": "en",
        "ein": "es",
        "einem": "en",
        "kein": "es",
        "keinem": "en",
        "mein": "es",
        "meinem": "en",
        "unser": "es",
        "unserem": "en",
    },
}


def adjective_ending(token):
    for stem in ADJECTIVES:
        for ending in ("e", "en", "er", "es", "em"):
            if token in (stem + ending, stem[:-1] + ending if stem.endswith("e") else None):
                return ending
    return None


def test_generated_articles_and_adjectives_agree_with_the_noun(pairs):
    # nouns whose plural differs, so a bare form is certainly singular
    singular = {n.de: n.gender for n in NOUNS.values() if n.de != n.de_pl}
    adjectives_checked = 0
    for de, _ in pairs[:5000]:
        tokens = [w.lower() for w in words(de)]
        for i, token in enumerate(words(de)):
            if token not in singular:
                continue
            j = i - 1
            while adjective_ending(tokens[j]):
                j -= 1
            endings = ARTICLE_ENDINGS[singular[token]]
            assert tokens[j] in endings, (token, de)  # a singular noun always has a determiner
            for adjective in tokens[j + 1 : i]:
                adjectives_checked += 1
                assert adjective_ending(adjective) == endings[tokens[j]], (adjective, token, de)
    assert adjectives_checked > 500


def test_objects_of_transitive_verbs_are_accusative(pairs):
    transitive = "|".join(v.de for v in VERBS if v.obj and not v.particle)
    simple = re.compile(rf"^(?:Der|Die|Das|Ein|Eine) \w+ (?:{transitive}) (\w+) (\w+)\.$")
    expected = {
        "m": {"den", "einen", "keinen", "meinen", "unseren"},
        "f": {"die", "eine", "keine", "meine", "unsere"},
        "n": {"das", "ein", "kein", "mein", "unser"},
    }
    seen = set()
    for de, _ in pairs:
        match = simple.match(de)
        if match and match[2] in NOUNS and NOUNS[match[2]].de_pl != match[2]:
            assert match[1] in expected[NOUNS[match[2]].gender], de
            seen.add(match[1])
    assert {"den", "einen", "die", "eine", "das", "ein"} <= seen


# --- word order ------------------------------------------------------------------------------


def test_subordinate_clauses_end_with_the_finite_verb(pairs):
    clause = re.compile(r"(?:^|, )(?:[Ww]eil|[Dd]ass|[Ww]enn|[Oo]bwohl|[Ww]ährend) ([^,.]+)")
    clauses = [c for de, _ in pairs for c in clause.findall(de)]
    assert len(clauses) > 2000
    for c in clauses:
        assert c.split()[-1] in CLAUSE_FINAL, c
        # and nowhere earlier, unless it is the infinitive before a modal ("anrufen will")
        assert c.split()[-1] in MODALS or not set(c.split()[:-1]) & FINITE - MODALS, c


def test_fronted_adverbial_puts_the_verb_second(pairs):
    fronted = [(de, en) for de, en in pairs if de.split()[0] == "Am" and de.split()[1] in WEEKDAYS]
    assert len(fronted) > 50
    for de, en in fronted:
        assert de.split()[2] in FINITE, de  # "Am Montag sieht die Frau ..."
        assert en.startswith(f"On {WEEKDAYS[de.split()[1]]} "), (de, en)


def test_fronted_subordinate_clause_inverts_the_main_clause(pairs):
    fronted = [de for de, _ in pairs if de.startswith(("Weil ", "Wenn ", "Obwohl ", "Während "))]
    assert len(fronted) > 100
    for de in fronted:
        assert de.split(", ")[1].split()[0] in FINITE, de


# --- surface form and distribution -----------------------------------------------------------


def test_demo_sentences_are_frequent_and_text_is_clean(pairs):
    assert ("Ein Hund läuft.", "A dog runs.") in pairs
    assert ("Die Katze schläft.", "The cat sleeps.") in pairs
    assert ("Ein Mann liest ein Buch.", "A man reads a book.") in pairs
    for sentence in (s for pair in pairs for s in pair):
        assert sentence[-1] == "." and sentence[0].isupper(), sentence
        assert "  " not in sentence and " ." not in sentence and " ," not in sentence, sentence
        assert ".." not in sentence and ",," not in sentence, sentence


def test_length_distribution(pairs):
    lengths = [len(de.split()) for de, _ in pairs[:5000]]
    assert 8 <= statistics.mean(lengths) <= 16
    assert max(lengths) >= 40 and max(lengths) <= 60
    assert 0.01 <= sum(n > 30 for n in lengths) / len(lengths) <= 0.1
    assert min(lengths) <= 3


def test_vocabulary_is_small(pairs):
    for side in (0, 1):
        vocabulary = {w.lower() for pair in pairs for w in words(pair[side])}
        assert 200 <= len(vocabulary) <= 600
