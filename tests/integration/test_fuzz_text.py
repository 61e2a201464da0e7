"""Property-based tests over the text a user gives `translate` (arguments, --prefix,
--constraint, --input, --prefixes, --constraints, --terms) and the in-process API: any text,
zero-width characters, combining marks, tag spellings, lone surrogates and bytes that are not
UTF-8 included, ends in translations or a one-line UserError, never another exception."""

from __future__ import annotations

import sys

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from util import fuzz_examples, guided_translate, tiny_config

from translator.config import DecodeConfig
from translator.data.readers import iter_lines
from translator.decode.line_guides import LineGuides, Terms
from translator.errors import UserError

# Pieces that have broken or could break text handling, mixed into random text.
ODD = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\ufe0f", "\u0301", "\u0307",
    "<bt>", "<2fr>", "<2en>", "<s>", "</s>", "<unk>", "<pad>", "▁", "ß", "İ", "ı", "ﬁ", "ǅ",
    "Σ", "ς", "\t", " ", "\x85", "\u2028", "\r", "#", "Hund", "Straße", "Café", "Cafe\u0301",
]  # fmt: skip
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


def texts(surrogates: bool = True, max_parts: int = 5):
    """Random text built from random characters and the ODD pieces; one in ten with a lone
    surrogate somewhere."""
    part = st.one_of(st.text(max_size=6), st.sampled_from(ODD))
    clean = st.lists(part, max_size=max_parts).map("".join)
    if not surrogates:
        return clean
    broken = st.tuples(clean, SURROGATES, clean).map("".join)
    return st.integers(0, 9).flatmap(lambda k: broken if k == 0 else clean)


def file_bytes():
    """A file's content: text as UTF-8, or raw bytes (often not UTF-8)."""
    lines = st.lists(texts(surrogates=False), min_size=1, max_size=4).map("\n".join)
    return st.one_of(lines.map(lambda t: t.encode("utf-8")), st.binary(max_size=40))


def check_outcome(fn):
    """fn() returns, or raises a UserError of one non-empty line; the result or None."""
    try:
        result = fn()
    except UserError as err:
        message = str(err)
        assert message.strip() and "\n" not in message and "\r" not in message, message
        event("a user error")
        return None
    event("a result")
    return result


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A checkpoint of a few training steps on the demo corpus, once per module."""
    from translator.config import config_from_dict
    from translator.train.trainer import Trainer

    root = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRANSLATOR_CACHE", str(root / "cache"))
        cfg = tiny_config(run_dir=str(root / "run"), train={"max_steps": 2})
        Trainer(config_from_dict(cfg)).run()
    return root / "run" / "last.pt"


@pytest.fixture(scope="module")
def translator(checkpoint):
    from translator.engines.load import load_engine

    return load_engine([checkpoint], "cpu", None, False, None, None)


@settings(max_examples=fuzz_examples(30))
@given(
    lines=st.lists(texts(), min_size=1, max_size=3),
    prefix=st.none() | texts(),
    constraints=st.lists(texts(max_parts=3), max_size=2),
    beam=st.integers(2, 4),
)
def test_translate_in_process_gives_translations_or_a_user_error(
    translator, lines, prefix, constraints, beam
):
    dc = DecodeConfig(beam=beam, max_len_a=1.0, max_len_b=4)
    prefixes = None if prefix is None else [prefix] * len(lines)
    given = [list(constraints) for _ in lines] if constraints else None
    out = check_outcome(lambda: guided_translate(translator, lines, prefixes, given, dc))
    if out is not None:
        assert len(out) == len(lines)
        for hyps in out:
            assert "\n" not in hyps[0].text and isinstance(hyps[0].text, str)


@settings(max_examples=fuzz_examples(60))
@given(content=file_bytes(), line=texts(), ignore_case=st.booleans())
def test_terms_files_give_terms_or_a_user_error(tmp_path_factory, content, line, ignore_case):
    path = tmp_path_factory.mktemp("terms") / "terms.tsv"
    path.write_bytes(content)
    terms = check_outcome(lambda: Terms.read(path, ignore_case))
    if terms is None:
        return
    found = check_outcome(lambda: terms.found(line))
    if found is not None:
        assert set(found) <= {t for _, t in terms.pairs}
        guides = LineGuides(terms=terms)
        check_outcome(lambda: guides.reader()([line]))


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`translator` in this process: (exit code, stdout, stderr)."""
    from translator import cli

    old = sys.argv
    sys.argv = ["translator", *argv]
    try:
        cli.main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out, err


def argument():
    """A command-line argument: no NUL (the system cannot pass one); a lone surrogate is how
    Python hands over a byte that is not UTF-8."""
    return texts(max_parts=3).map(lambda t: t.replace("\x00", ""))


def lines_file(count: int):
    """A file of `count` lines of random text (a lone surrogate written as the bytes that
    Python's surrogatepass gives, which are not UTF-8)."""
    lines = st.lists(texts(max_parts=3), min_size=count, max_size=count)
    return lines.map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass"))


@settings(max_examples=fuzz_examples(20))
@given(
    text=st.lists(argument(), min_size=1, max_size=2),
    prefix=st.none() | argument(),
    constraint=st.lists(argument(), max_size=1),
    read=st.sampled_from(["arguments", "--input", "--input --prefixes", "--input --constraints"]),
    data=st.data(),
)
def test_the_cli_gives_translations_or_one_error_line(
    checkpoint, tmp_path_factory, capsys, text, prefix, constraint, read, data
):
    folder = tmp_path_factory.mktemp("cli")
    argv = ["translate", "--checkpoint", str(checkpoint), "--beam", "3"]
    for option in read.split()[1:]:  # a line for each line of --input
        (folder / option).write_bytes(data.draw(lines_file(len(text)), option))
        argv += [option, str(folder / option)]
    if "--prefixes" not in read and prefix is not None:
        argv += ["--prefix", prefix]
    for c in constraint:
        argv += ["--constraint", c]
    if data.draw(st.booleans(), "with --terms"):
        (folder / "terms").write_bytes(data.draw(file_bytes(), "--terms"))
        argv += ["--terms", str(folder / "terms")]
    if read == "arguments":
        argv += ["--", *text]
    else:
        (folder / "input").write_bytes("\n".join(text).encode("utf-8", "surrogatepass"))
        argv += ["--input", str(folder / "input")]
    code, out, err = run_cli(argv, capsys)
    event(f"exit {code}")
    assert "Traceback" not in err, err
    if code == 0:  # a line for each input line (an empty --input file has none)
        given = len(text) if read == "arguments" else sum(1 for _ in iter_lines(folder / "input"))
        assert out.count("\n") == given, out
        return
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), err
