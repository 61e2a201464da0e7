"""The command line itself: --version, help text, and the decoding overrides that translate,
eval and serve share, with a PyTorch checkpoint and with a CTranslate2 export."""

import json
import re
from importlib.metadata import version

import pytest
from commandline import CHANGED, COMMANDS, OPTIONS, SENTENCES

from translator.engines.load import load_engine


def test_version(here):
    result = here("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"translator {version('translator')}\n"


# -- help -------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_shows_no_python_types(command, here):
    result = here(*[command] if command else [], "--help", env_extra={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Usage:" in text and "--help" in text, text
    # the description's paragraphs fill the width (not the source's line breaks, wrapped again)
    lines = [line.strip() for line in text.split("╭")[0].splitlines()]
    for paragraph in "\n".join(lines).split("\n\n"):
        lines = paragraph.strip().splitlines()
        assert all(len(line) > 50 for line in lines[:-1]), paragraph
    shown = re.findall(r"<[a-zA-Z][^>]*>|\blist\[|\bbool\b|\bstr\b|\bPath\b", text)
    assert not shown, (shown, text)
    assert command == "serve" or "serve:" not in text, text  # (each option speaks of its own)


def test_top_level_help_gives_each_command_one_line(here):
    result = here("--help", env_extra={"COLUMNS": "100"})
    panel = result.stdout.split("Commands")[1].splitlines()[1:-1]
    rows = [line.strip("│ ").split(" ", 1)[0] for line in panel if line.startswith("│")]
    assert rows == COMMANDS, result.stdout


# -- decoding overrides -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def models(tmp_path_factory, three_steps):
    """A tiny Transformer checkpoint and, where CTranslate2 is installed, its export."""
    root = tmp_path_factory.mktemp("options")
    paths = {"pytorch": three_steps}
    try:
        import ctranslate2  # noqa: F401
    except ImportError:
        return paths
    from translator.engines.export import export_checkpoint

    export_checkpoint(paths["pytorch"], "ctranslate2", "float32", root / "ct2")
    paths["ctranslate2"] = root / "ct2"
    return paths


def nbest_lines(stdout):
    rows = [line.split("\t") for line in stdout.splitlines()]
    return [(int(i), float(score), text) for i, score, text in rows]


@pytest.mark.parametrize("engine", ["pytorch", "ctranslate2"])
def test_translate_applies_the_decoding_overrides(models, engine, here):
    if engine not in models:
        pytest.skip("the `ctranslate2` extra is not installed")
    path = models[engine]
    args = ["translate", "--checkpoint", str(path), "--nbest", "2", "--batch-size", "2"]
    result = here(*args, *OPTIONS, *SENTENCES)
    assert result.returncode == 0, result.stderr
    got = nbest_lines(result.stdout)

    translator = load_engine(path, "cpu")
    default = translator.translate(SENTENCES, translator.request(nbest=2))
    changed = translator.cfg.decode.replace(**CHANGED)
    want = translator.translate(SENTENCES, translator.request(decode=changed, nbest=2))
    flat = [(i, h) for i, hyps in enumerate(want) for h in hyps]
    assert [(i, text) for i, _, text in got] == [(i, h.text) for i, h in flat]
    assert all(abs(score - h.score) < 1e-3 for (_, score, _), (_, h) in zip(got, flat))
    assert all(len(h.tokens) <= 3 for _, h in flat)
    # The overrides matter here: the model's own settings give longer outputs and other scores.
    assert any(len(h.tokens) > 3 for hyps in default for h in hyps)
    assert [h.score for hyps in default for h in hyps] != pytest.approx([h.score for _, h in flat])


@pytest.mark.parametrize("engine", ["pytorch", "ctranslate2"])
def test_eval_applies_the_decoding_overrides(models, engine, tmp_path, here):
    if engine not in models:
        pytest.skip("the `ctranslate2` extra is not installed")
    path = models[engine]
    src, ref, out = tmp_path / "src.de", tmp_path / "ref.en", tmp_path / "hyps.en"
    src.write_text("".join(s + "\n" for s in SENTENCES), encoding="utf-8")
    ref.write_text("A dog runs.\nThe old woman reads a book.\nTwo cats play.\n", encoding="utf-8")
    args = ["eval", "--checkpoint", str(path), "--src", str(src), "--ref", str(ref), "--json"]
    result = here(*args, *OPTIONS, "--batch-size", "2", "--output", str(out))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["beam"], report["len_penalty"]) == (3, 0.0)

    translator = load_engine(path, "cpu")
    want = translator.translate(
        SENTENCES, translator.request(decode=translator.cfg.decode.replace(**CHANGED))
    )
    assert out.read_text(encoding="utf-8").splitlines() == [r[0].text for r in want]
