"""Fake `translate` callables for the documents tests: each gives every sentence a
translation and a word alignment whose effect on structure is known exactly."""


def same(sentences):
    """Each sentence as it is, word i aligned to word i."""
    return [(s, [(i, i) for i in range(len(s.split()))]) for s in sentences]


def upper(sentences):
    """Each sentence in capitals, word i aligned to word i."""
    return [(s.upper(), [(i, i) for i in range(len(s.split()))]) for s in sentences]


def reverse(sentences):
    """Each sentence's words in reverse order, each aligned to where it went."""
    out = []
    for s in sentences:
        n = len(s.split())
        out.append((" ".join(reversed(s.split())), [(i, n - 1 - i) for i in range(n)]))
    return out


def fused(sentences):
    """Each sentence's words in reverse order, a word holding "lm" written "QQ"."""
    out = []
    for s in sentences:
        words = ["QQ" if "lm" in w else w for w in s.split()]
        n = len(words)
        out.append((" ".join(reversed(words)), [(i, n - 1 - i) for i in range(n)]))
    return out


def bracketed(sentences):
    """Each word's letters and digits in brackets with a full stop after, "(Hund)." of
    "Hund,", word i aligned to word i: every target word has punctuation of its own."""
    out = []
    for s in sentences:
        words = ["(" + "".join(c for c in w if c.isalnum()) + ")." for w in s.split()]
        out.append((" ".join(words), [(i, i) for i in range(len(words))]))
    return out


def recording(inner):
    """(a translate that records the sentences it is given, then answers as `inner`, the
    list it records them in)."""
    seen = []

    def translate(sentences):
        seen.extend(sentences)
        return inner(sentences)

    return translate, seen
