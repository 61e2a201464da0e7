"""A tiny phrase grammar of German-like and English-like sentence pairs, for the tokenizer
tests: small vocabularies trained on it in seconds."""

from __future__ import annotations

import random

# byte_fallback reserves 256 byte pieces, so a byte-fallback vocabulary needs a little over
# 256 + 4 + the number of distinct characters; 400 is small and always enough here.
VOCAB = 400

DE_SUBJ = [
    ("Der Hund", "The dog"),
    ("Die Katze", "The cat"),
    ("Das Mädchen", "The girl"),
    ("Der Junge", "The boy"),
    ("Die Frau", "The woman"),
    ("Der Mann", "The man"),
    ("Das Pferd", "The horse"),
    ("Der Vogel", "The bird"),
]
DE_VERB = [
    ("läuft", "runs"),
    ("springt", "jumps"),
    ("schläft", "sleeps"),
    ("spielt", "plays"),
    ("isst", "eats"),
    ("schwimmt", "swims"),
]
DE_PLACE = [
    ("im Garten", "in the garden"),
    ("über die Straße", "across the street"),
    ("am Strand", "on the beach"),
    ("im grünen Park", "in the green park"),
    ("neben dem Haus", "next to the house"),
]


def make_pairs(n: int = 200, seed: int = 0) -> list[tuple[str, str]]:
    """German-like / English-like sentence pairs from a tiny phrase grammar."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        (ds, es), (dv, ev), (dp, ep) = (
            rng.choice(DE_SUBJ),
            rng.choice(DE_VERB),
            rng.choice(DE_PLACE),
        )
        end = rng.choice([".", "!", "?"])
        pairs.append((f"{ds} {dv} {dp}{end}", f"{es} {ev} {ep}{end}"))
    return pairs


PAIRS = make_pairs()
TARGETS = [t for _, t in PAIRS]
SOURCES = [s for s, _ in PAIRS]
# Unseen sentences built only from characters seen in training.
NEW_TARGETS = ["The horse sleeps in the garden and the girl swims.", "green dog!", "e"]


def pieces(sp) -> list[str]:
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
