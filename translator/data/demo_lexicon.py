"""Words of the demo corpus: nouns, verbs, adjectives, numbers, ordinals, months, weekdays.

Kept apart from the grammar in demo.py so each file reads in one sitting.
"""

from __future__ import annotations

from itertools import accumulate
from typing import NamedTuple

# --- Lexicon ---------------------------------------------------------------------------------
# Tags are selectional restrictions, so sentences stay plausible ("reads a book", never "reads
# a cow"). Weights make the README's demo sentence "Ein Hund läuft." frequent.


class Noun(NamedTuple):
    gender: str  # "m", "f" or "n"
    de: str
    de_pl: str
    en: str
    en_pl: str
    tags: frozenset[str]  # "animate" is added to every person and animal
    weight: float


class Verb(NamedTuple):
    de: str  # 3rd person singular
    de_pl: str  # 3rd person plural, which is also the infinitive of every verb here
    en: str
    en_pl: str
    subj: frozenset[str]
    obj: frozenset[str] | None  # None: intransitive
    particle: str  # separable prefix: "ruft ... an" in a main clause, "anruft" at the end
    weight: float


# gender singular/plural english/plural tags [weight]; "|" separates entries on a line
_NOUN_TABLE = """
m Mann/Männer man/men person 5              | f Frau/Frauen woman/women person 5
n Kind/Kinder child/children person 4       | n Mädchen/Mädchen girl/girls person 2
m Vater/Väter father/fathers person         | f Mutter/Mütter mother/mothers person
m Bruder/Brüder brother/brothers person     | f Schwester/Schwestern sister/sisters person
m Lehrer/Lehrer teacher/teachers person     | m Arzt/Ärzte doctor/doctors person
m Freund/Freunde friend/friends person      | m Hund/Hunde dog/dogs animal,dog 12
f Katze/Katzen cat/cats animal 6            | m Vogel/Vögel bird/birds animal 2
f Maus/Mäuse mouse/mice animal              | f Ente/Enten duck/ducks animal
f Kuh/Kühe cow/cows animal                  | n Pferd/Pferde horse/horses animal
n Schaf/Schafe sheep/sheep animal           | m Fisch/Fische fish/fish food,pet
m Ball/Bälle ball/balls item,toy,throw 2    | m Schlüssel/Schlüssel key/keys item,throw
f Blume/Blumen flower/flowers item          | f Tasche/Taschen bag/bags item,open
m Tisch/Tische table/tables item,surface,build | m Stuhl/Stühle chair/chairs item,surface,build
n Bett/Betten bed/beds surface,build        | n Buch/Bücher book/books item,text,write,open 4
m Brief/Briefe letter/letters item,text,write | f Zeitung/Zeitungen newspaper/newspapers item,text
n Lied/Lieder song/songs write,song         | m Apfel/Äpfel apple/apples item,food,throw
f Banane/Bananen banana/bananas item,food,throw | n Ei/Eier egg/eggs item,food,throw
m Kuchen/Kuchen cake/cakes item,food        | n Auto/Autos car/cars vehicle,landmark 2
m Zug/Züge train/trains vehicle,landmark    | n Fahrrad/Fahrräder bicycle/bicycles vehicle
n Haus/Häuser house/houses place,landmark,build,visit 2 | f Tür/Türen door/doors open,landmark
n Fenster/Fenster window/windows open,landmark | m Baum/Bäume tree/trees landmark
f Schule/Schulen school/schools place,visit,landmark | f Stadt/Städte city/cities place,visit
n Dorf/Dörfer village/villages place,visit  | m Garten/Gärten garden/gardens place,visit
m Park/Parks park/parks place,visit         | f Küche/Küchen kitchen/kitchens place
n Zimmer/Zimmer room/rooms place            | f Straße/Straßen street/streets surface
f Brücke/Brücken bridge/bridges surface,landmark,build
"""

# 3sg/3pl[/separable prefix] english-3sg/plural ("_" is a space) subject object [weight]
_VERB_TABLE = """
läuft/laufen runs/run animate - 16          | schläft/schlafen sleeps/sleep animate - 6
spielt/spielen plays/play animate - 2       | singt/singen sings/sing person -
lacht/lachen laughs/laugh person -          | wartet/warten waits/wait animate -
schwimmt/schwimmen swims/swim animate -     | arbeitet/arbeiten works/work person -
tanzt/tanzen dances/dance person -          | springt/springen jumps/jump animate -
bellt/bellen barks/bark dog -               | kommt/kommen/an arrives/arrive person,vehicle -
steht/stehen/auf gets_up/get_up person -    | holt/holen/ab picks_up/pick_up person person,item
sieht/sehen sees/see animate any 4          | hat/haben has/have person item,animal,vehicle 2
sucht/suchen looks_for/look_for animate item,animate | findet/finden finds/find animate item,animal
kauft/kaufen buys/buy person item,vehicle   | liest/lesen reads/read person text 5
trägt/tragen carries/carry person item      | malt/malen paints/paint person any
hört/hören hears/hear animate animate,song  | mag/mögen likes/like animate any
braucht/brauchen needs/need person item,vehicle | isst/essen eats/eat person food
frisst/fressen eats/eat animal food         | schreibt/schreiben writes/write person write
besucht/besuchen visits/visit person person,visit | füttert/füttern feeds/feed person animal,pet
ruft/rufen/an calls/call person person      | öffnet/öffnen opens/open person open
baut/bauen builds/build person build        | wirft/werfen throws/throw person throw
schläft/schlafen/ein falls_asleep/fall_asleep animate -
"""

# verbs that take a "dass" clause, and modals (which send the infinitive to the end)
_SAY_VERBS = [
    ("sagt", "sagen", "says", "say"),
    ("weiß", "wissen", "knows", "know"),
    ("glaubt", "glauben", "believes", "believe"),
    ("hofft", "hoffen", "hopes", "hope"),
    ("denkt", "denken", "thinks", "think"),
]
_MODALS = [
    ("kann", "können", "can", "can"),
    ("will", "wollen", "wants to", "want to"),
    ("muss", "müssen", "must", "must"),
]
_COLORS = [
    ("rot", "red"),
    ("blau", "blue"),
    ("grün", "green"),
    ("gelb", "yellow"),
    ("schwarz", "black"),
    ("weiß", "white"),
]
_ADJECTIVE_TAGS = [
    ("groß", "big", "any"),
    ("klein", "small", "any"),
    ("alt", "old", "any"),
    ("schön", "beautiful", "any"),
    ("jung", "young", "animate"),
    ("müde", "tired", "animate"),
    ("hungrig", "hungry", "animate"),
    ("freundlich", "friendly", "animate"),
    ("lustig", "funny", "animate"),
    ("schnell", "fast", "animal,vehicle"),
    ("neu", "new", "item,vehicle,build"),
]
_ADJECTIVE_TAGS += [(de, en, "animal,item,vehicle,build") for de, en in _COLORS]


def _tags(field: str) -> frozenset[str]:
    return frozenset(field.split(","))


def _entries(table: str) -> list[list[str]]:
    return [
        [f.replace("_", " ") for f in entry.split()]
        for line in table.strip().splitlines()
        for entry in line.split("|")
    ]


def _noun(gender: str, forms: str, english: str, tags: str, weight: str = "1") -> Noun:
    animate = {"animate"} if {"person", "animal"} & _tags(tags) else set()
    return Noun(
        gender, *forms.split("/"), *english.split("/"), _tags(tags) | animate, float(weight)
    )


def _verb(forms: str, english: str, subj: str, obj: str, weight: str = "1") -> Verb:
    de, de_pl, *particle = forms.split("/")
    return Verb(
        de,
        de_pl,
        *english.split("/"),
        _tags(subj),
        None if obj == "-" else _tags(obj),
        "".join(particle),
        float(weight),
    )


NOUNS = {n.de: n for n in (_noun(*e) for e in _entries(_NOUN_TABLE))}
VERBS = [_verb(*e) for e in _entries(_VERB_TABLE)]
ADJECTIVES = {de: (en, _tags(tags)) for de, en, tags in _ADJECTIVE_TAGS}
_VERB_CUM_WEIGHTS = list(accumulate(v.weight for v in VERBS))
_ADJECTIVES_FOR = {
    noun: [a for a, (_, t) in ADJECTIVES.items() if "any" in t or t & n.tags]
    for noun, n in NOUNS.items()
}
_COLOR_WORDS = {de for de, _ in _COLORS}

# --- Numbers, ordinals and dates -------------------------------------------------------------

_DE_ONES = [""] + (
    "eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn "
    "vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn"
).split()
_DE_TENS = ["", ""] + "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()
_EN_ONES = [""] + (
    "one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_EN_TENS = ["", ""] + "twenty thirty forty fifty sixty seventy eighty ninety".split()


def _de_number(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    # inside a compound "eins" loses its s: einundzwanzig, einhundert
    head = ("ein" if hundreds == 1 else _DE_ONES[hundreds]) + "hundert" if hundreds else ""
    if rest < 20:
        return head + _DE_ONES[rest]
    tens, ones = divmod(rest, 10)
    units = ("ein" if ones == 1 else _DE_ONES[ones]) + "und" if ones else ""
    return head + units + _DE_TENS[tens]


def _en_number(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    tens, ones = divmod(rest, 10)
    tail = _EN_ONES[rest] if rest < 20 else _EN_TENS[tens] + (f"-{_EN_ONES[ones]}" if ones else "")
    if not hundreds:
        return tail
    return f"{_EN_ONES[hundreds]} hundred" + (f" and {tail}" if rest else "")


def number_words(n: int) -> tuple[str, str]:
    """The cardinal ``n`` (1-999) spelled out: ``21 -> ("einundzwanzig", "twenty-one")``."""
    if not 1 <= n <= 999:
        raise ValueError(f"number_words covers 1-999, got {n}")
    return _de_number(n), _en_number(n)


_DE_ORDINAL_STEMS = {1: "erst", 3: "dritt", 7: "siebt", 8: "acht"}
_EN_ORDINALS = {
    1: "first",
    2: "second",
    3: "third",
    5: "fifth",
    8: "eighth",
    9: "ninth",
    12: "twelfth",
}


def ordinal_words(n: int) -> tuple[str, str]:
    """The ordinal ``n`` (1-99) in the form a date needs: ``3 -> ("dritten", "third")``."""
    if not 1 <= n <= 99:
        raise ValueError(f"ordinal_words covers 1-99, got {n}")
    de = (_DE_ORDINAL_STEMS.get(n) or _de_number(n) + ("t" if n < 20 else "st")) + "en"
    if n > 20 and n % 10:
        return de, f"{_EN_TENS[n // 10]}-{ordinal_words(n % 10)[1]}"
    en = _en_number(n)
    return de, _EN_ORDINALS.get(n) or (en[:-1] + "ieth" if en.endswith("y") else en + "th")


_MONTHS = list(
    zip(
        "Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split(),
        "January February March April May June July August September October November December".split(),
        (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31),
        strict=True,
    )
)
_WEEKDAYS = list(
    zip(
        "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag".split(),
        "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
        strict=True,
    )
)
