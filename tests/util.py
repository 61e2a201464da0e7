"""Helpers shared by the test modules."""

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import strategies as st

from translator.errors import UserError

ROOT = Path(__file__).resolve().parents[1]  # the repository


def user_error(fn, *args, **kwargs) -> str:
    """Call fn, require a UserError with a one-line message and return that message."""
    with pytest.raises(UserError) as excinfo:
        fn(*args, **kwargs)
    message = str(excinfo.value)
    assert message.strip(), "empty error message"
    assert "\n" not in message and "\r" not in message, message
    assert "\x1b" not in message, message  # no terminal colour codes
    return message


def family_config(family: str, **sizes):
    """The typed model section of `family` from sizes shared by tests of several families:
    keys that this family does not have are left out."""
    from translator.models import family as families

    own = families.config_class(family).model_fields
    return families.model_config(family, **{k: v for k, v in sizes.items() if k in own})


def tiny_config(**changes) -> dict:
    """A training config that runs in seconds on the demo corpus.

    Each keyword names a top-level key; a dict value updates that section's keys.
    """
    cfg = {
        "seed": 1,
        "data": {"dataset": "demo", "demo_train": 60, "demo_dev": 10, "demo_test": 10},
        "tokenizer": {"vocab_size": 400},
        "model": {
            "d_model": 32,
            "heads": 2,
            "enc_layers": 1,
            "dec_layers": 1,
            "ff_dim": 64,
            "dropout": 0.0,
        },
        "train": {
            "max_steps": 12,
            "batch_tokens": 400,
            "lr": 0.003,
            "warmup_steps": 4,
            "valid_every": 1000,
            "save_every": 1000,
            "dtype": "fp32",
            "threads": 1,
        },
        "decode": {"beam": 2, "max_len_b": 5, "max_len_a": 1.0},
    }
    for key, value in changes.items():
        cfg[key] = {**cfg[key], **value} if isinstance(value, dict) else value
    return cfg


def cli(*args, stdin=None, env_extra=None, timeout=600):
    """Run the real `translator` command in a subprocess, offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "translator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def at_once(*calls):
    """The results of independent calls, each a subprocess launch, run side by side: most
    of a launch is one core importing torch, which a second launch overlaps on the other."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda call: call(), calls))


# -- small models for the search tests ---------------------------------------------------------


def model_and_src(seed=0):
    """A small Transformer and a batch of 6 sources of different lengths."""
    import torch

    from translator.models.family import model_config
    from translator.models.transformer import Transformer

    torch.manual_seed(seed)
    cfg = model_config(d_model=32, heads=4, enc_layers=1, dec_layers=2, ff_dim=64, dropout=0.0)
    model = Transformer(cfg, 30, 30, share_src_tgt=True).eval()
    src = torch.randint(4, 30, (6, 8), generator=torch.Generator().manual_seed(seed))
    src[2, 3:] = 0
    src[4, 5:] = 0
    return model, src


def tiny_model(family: str):
    """A freshly initialised small model of `family`, vocabulary 30, without dropout."""
    from translator.models.family import build_model

    cfg = family_config(
        family,
        d_model=32,
        heads=4,
        enc_layers=1,
        dec_layers=1,
        ff_dim=64,
        embed_dim=24,
        hidden_size=32,
        dropout=0.0,
    )
    return build_model(cfg, 30, 30, True).eval()


def favour_eos(model, bias):
    """Make <eos> likelier so hypotheses end at different lengths."""
    import torch

    from translator.specials import EOS

    with torch.no_grad():
        model.generator.weight.data = model.generator.weight.data.clone()
        model.generator.weight.data[EOS] += bias


def model_score(model, src_row, tokens, alpha):
    """Log-probability of tokens and then <eos> under the full model, length-normalised."""
    import torch

    from translator.decode.rules import length_penalty
    from translator.specials import BOS, EOS

    with torch.no_grad():
        logp = torch.log_softmax(model(src_row, torch.tensor([[BOS] + tokens]))[0], -1)
    targets = tokens + [EOS]
    total = sum(float(logp[t, targets[t]]) for t in range(len(targets)))
    return total / float(length_penalty(torch.tensor(len(targets)), alpha))


def assert_user_error(result, *needles):
    """A finished command that failed as a user's mistake: exit 2, one error line holding
    every needle, no traceback; that line."""
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    err = result.stderr.strip()
    assert "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith("error: "), err
    for needle in needles:
        assert needle in last, (needle, last)
    return last


def multiway_folder(folder, train=60, dev=10, test=10, seed=3):
    """A four-way parallel corpus in `folder` ({split}.{de,en,fr,cs}): the demo's German and
    English, and two made-up languages derived from them word by word (fr: each English
    word reversed, cs: each German word with -ka), so that every direction is learnable."""
    from translator.data.demo import demo_splits

    splits = demo_splits(train, dev, test, seed=seed)
    made = {
        "de": lambda de, en: de,
        "en": lambda de, en: en,
        "fr": lambda de, en: " ".join(w[::-1] for w in en.split()),
        "cs": lambda de, en: " ".join(w + "ka" for w in de.split()),
    }
    for split, pairs in splits.items():
        for lang, make in made.items():
            lines = "".join(make(de, en) + "\n" for de, en in pairs)
            (folder / f"{split}.{lang}").write_text(lines, encoding="utf-8")
    return folder


def pair_ids(n: int, first: int):
    """n pairs of ids whose sources start with `first` + row (so a batch shows its rows)."""
    from translator.data.batching import PairIds
    from translator.specials import BOS, EOS

    src = [[first + i, 5 + i % 3, EOS] for i in range(n)]
    tgt = [[BOS] + [6] * (1 + i % 4) + [EOS] for i in range(n)]
    return PairIds.from_lists(src, tgt)


def fuzz_examples(n: int) -> int:
    """How many examples a property-based test tries: `n` in `make test`, 20 times as many
    under `make fuzz` (the hypothesis profile "fuzz", tests/conftest.py)."""
    from hypothesis import settings

    return n * 20 if settings._current_profile == "fuzz" else n


# YAML-like values of any shape: what a config file may hold after a careless edit.
yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def guided_translate(engine, lines, prefixes=None, constraints=None, decode=None, nbest=1):
    """engine.translate of `lines` with each line's target prefix text and required phrases,
    read into ids by a DecodeRequest as a command or the server does."""
    from translator.decode.request import DecodeRequest

    request = DecodeRequest(decode or engine.cfg.decode, nbest)
    request = request.guided(engine.tokenizer, lines, engine.max_target, prefixes, constraints)
    return engine.translate(lines, request)


def skeleton(html: str, closed: bool = True) -> list:
    """Each HTML element's start tag (as written) with the start tags around it, sorted;
    raises when an end tag does not close the element last opened, or (`closed`) when one
    is left open at the end."""
    from translator.documents.html_units import VOID, tokens

    stack, found = [], []
    for tok in tokens(html):
        if tok.kind in ("start", "startend"):
            found.append((tuple(stack), tok.raw))
            if tok.kind == "start" and tok.tag not in VOID:
                stack.append(tok.raw)
        elif tok.kind == "end":
            assert stack and re.match(rf"<{tok.tag}[\s>]", stack[-1]), (tok.raw, stack)
            stack.pop()
    assert not closed or not stack, stack
    return sorted(found)


def html_text(html: str) -> Counter:
    """The characters of an HTML page's text but whitespace, in any case."""
    return Counter(re.sub(r"\s", "", re.sub(r"<[^>]*>", "", html)).lower())


def html_capitals(doc: str) -> str:
    """`doc` with its text (not its markup) in capitals."""
    return re.sub(r"(^|>)([^<]*)", lambda m: m[1] + m[2].upper(), doc)


def html_keeps_all(doc: str) -> str:
    """Asserts that translate_html gives `doc` back byte for byte through the fake model
    that changes nothing, and keeps its nesting, every tag and every character of its text
    through the one writing capitals and the one turning words round; returns the latter's
    output."""
    from fake_translate import reverse, same, upper

    from translator.documents.html import translate_html

    assert translate_html(doc, same, "en") == doc
    for translate in (upper, reverse):
        out = translate_html(doc, translate, "en")
        assert skeleton(out) == skeleton(doc)
        assert sorted(re.findall(r"<[^>]*>", out)) == sorted(re.findall(r"<[^>]*>", doc))
        assert html_text(out) == html_text(doc)
    return out


def write_varied_pairs(src: Path, ref: Path, times: int = 3) -> int:
    """Five German sentences and their references, `times` over: pairs a trained model
    translates to different chrF, as calibrate needs (one sentence repeated is refused)."""
    german = ["Ein Hund läuft.", "Zwei Katzen schlafen.", "Die Frau liest ein Buch.",
              "Ein Mann fährt Rad.", "Kinder spielen im Park."]  # fmt: skip
    english = ["A dog runs.", "Two cats sleep.", "The woman reads a book.",
               "A man rides a bike.", "Children play in the park."]  # fmt: skip
    src.write_text("\n".join(german * times) + "\n", encoding="utf-8")
    ref.write_text("\n".join(english * times) + "\n", encoding="utf-8")
    return len(german) * times
