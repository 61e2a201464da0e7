"""The command line itself: --version, help text, and the decoding overrides that translate,
eval and serve share, with a PyTorch checkpoint and with a CTranslate2 export."""

from functools import partial

import typer
from commandline import COMMANDS
from util import cli

from translator.cli import app
from translator.cli_options import decode_overrides
from translator.config import DecodeConfig

cli = partial(cli, timeout=300)


# -- help -------------------------------------------------------------------------------------


def test_every_command_and_option_has_help():
    group = typer.main.get_command(app)
    assert sorted(group.commands) == sorted(COMMANDS)
    for name, command in group.commands.items():
        assert (command.help or "").strip(), name
        for param in command.params:
            assert (getattr(param, "help", None) or "").strip(), (name, param.name)


# -- decoding overrides -----------------------------------------------------------------------


def test_decode_overrides_replace_only_what_is_given():
    dc = DecodeConfig()
    assert decode_overrides(dc) == dc
    new = decode_overrides(dc, beam=3, len_penalty=0.0, max_len_a=0.5, max_len_b=0, batch_size=7)
    assert new == dc.replace(beam=3, len_penalty=0.0, max_len_a=0.5, max_len_b=0, batch_size=7)
    # the K best need a beam of K at least
    assert decode_overrides(dc, beam=3, nbest=5).beam == 5
    assert decode_overrides(dc, beam=3, nbest=2).beam == 3


def test_a_number_option_names_what_is_wrong_with_its_value(capsys, tmp_path):
    """nan is no number in any range: the message says so, rather than naming a range end
    that nan is not over."""
    from commandline import run_cli

    said, ckpt = {}, tmp_path / "x.pt"
    ckpt.touch()  # (a path that is not there is named first)
    for value in ("nan", "inf", "2", "abc"):
        code, _, err = run_cli(capsys, "translate", "--checkpoint", ckpt,
                               "--min-confidence", value, "a")  # fmt: skip
        assert code == 2 and "Traceback" not in err
        said[value] = err.strip().splitlines()[-1]
    assert "'--min-confidence': expected a finite number, got nan (hint:" in said["nan"]
    assert "expected a finite number, got inf (hint:" in said["inf"]
    assert "2 is not in the range 0 to 1 (hint:" in said["2"]
    assert "'abc' is not a number (hint:" in said["abc"]


def test_a_text_or_picture_output_never_replaces_a_model(capsys, tmp_path):
    """A run's checkpoint (or a link to one, named as a picture) and a file of a folder
    translator wrote are refused as outputs; a document (a zip too) and a text are not."""
    import zipfile

    from commandline import run_cli

    from translator.fileio.outputs import record
    from translator.models.checkpoint import save_checkpoint

    ckpt = tmp_path / "last.pt"
    save_checkpoint(ckpt, {"model": {}})
    link = tmp_path / "att.png"
    link.symlink_to(ckpt)
    export = tmp_path / "export"
    export.mkdir()
    (export / "model.bin").write_bytes(b"weights")
    record(export, ["model.bin"], "export")
    doc, text = tmp_path / "old.docx", tmp_path / "old.txt"
    with zipfile.ZipFile(doc, "w") as z:
        z.writestr("word/document.xml", "<w:document/>")
    text.write_text("old")
    src = tmp_path / "in.de"
    src.write_text("Ein Hund.\n")
    model = tmp_path / "x.pt"
    model.touch()  # (what the options are checked against comes first)

    def refusal(*args):
        code, _, err = run_cli(capsys, "translate", "--checkpoint", model, *args)
        return code, err.strip().splitlines()[-1]

    code, said = refusal("--input", src, "--output", ckpt)
    assert code == 2 and f"--output {ckpt} is a PyTorch checkpoint; refusing" in said
    code, said = refusal("--plot-attention", link, "Ein Hund.")
    assert code == 2 and f"(a link to {ckpt}) is a PyTorch checkpoint" in said
    code, said = refusal("--input", src, "--output", export / "model.bin")
    assert code == 2 and "a file of the folder translator wrote" in said
    for fine in (doc, text):  # refused later, for the model, not for the output
        code, said = refusal("--input", src, "--output", fine)
        assert code == 2 and "refusing" not in said
    assert ckpt.stat().st_size > 0 and text.read_text() == "old"
