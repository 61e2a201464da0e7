"""End to end on the demo corpus: train, resume, eval and translate, through the real CLI."""

import json
import os
import re

import pytest
import torch
import yaml
from commandline import cli_captured
from sacrebleu.metrics import BLEU, CHRF, TER
from training import PIPELINE_TINY as TINY
from util import cli, tiny_config

from translator.config import config_from_dict
from translator.train.trainer import Trainer


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline")
    cfg = {**TINY, "run_dir": str(root / "run")}
    path = root / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {"TRANSLATOR_CACHE": str(root / "cache")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRANSLATOR_CACHE", env["TRANSLATOR_CACHE"])
        result = cli_captured("train", "--config", str(path), "--set", "train.max_steps=30")
    assert result.returncode == 0, result.stderr
    return root / "run", result, env


def test_train_writes_checkpoints_config_and_summary(trained):
    run, result, _ = trained
    for name in ("best.pt", "last.pt", "config.yaml", "summary.json"):
        assert (run / name).is_file(), name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] == 30
    assert "max_steps=30 reached" in summary["stop_reason"]
    assert summary["target_tokens_per_second"] > 0
    minutes = [v["minutes"] for v in summary["validations"]]  # what `translator curves` draws
    assert minutes == sorted(minutes) and 0 < minutes[-1] <= summary["wall_minutes"] + 0.01
    assert "dev BLEU" in result.stderr and "padding" in result.stderr
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["train"]["max_steps"] == 30  # the resolved config, --set included
    ckpt = torch.load(run / "best.pt", weights_only=True)
    assert ckpt["config"]["train"]["max_steps"] == 30
    assert isinstance(ckpt["tokenizer"]["src"], bytes)


def test_eval_json_and_output_file(trained, tmp_path, here):
    run, _, env = trained
    out = tmp_path / "hyps.txt"
    result = here(
        "eval",
        "--checkpoint",
        str(run / "best.pt"),
        "--json",
        "--beam",
        "1",
        "--output",
        str(out),
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert set(scores) >= {"bleu", "chrf", "ter", "signature", "n"}
    assert scores["n"] == 20 and scores["beam"] == 1
    assert "nrefs:1" in scores["signature"]
    assert len(out.read_text().splitlines()) == 20


def test_eval_src_ref_scores_a_file_pair(trained, tmp_path, here):
    run, _, env = trained
    (tmp_path / "s.de").write_text("Ein Hund läuft.\nDie Katze schläft.\n")
    (tmp_path / "r.en").write_text("A dog runs.\nThe cat sleeps.\n")
    result = here(
        "eval",
        "--checkpoint",
        str(run / "best.pt"),
        "--src",
        str(tmp_path / "s.de"),
        "--ref",
        str(tmp_path / "r.en"),
        "--json",
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n"] == 2
    args = ["eval", "--checkpoint", str(run / "best.pt"), "--src", str(tmp_path / "s.de")]
    text = here(*args, "--ref", str(tmp_path / "r.en"), env_extra=env).stdout
    for metric in ("BLEU", "chrF", "TER"):  # each score with its sacreBLEU signature
        assert re.search(rf"^{metric} signature: nrefs:1\|", text, re.M), text
    # a second reference: sacreBLEU's multi-reference scores of the same translations
    (tmp_path / "r2.en").write_text("A dog is running.\nThe cat is asleep.\n")
    hyps = tmp_path / "hyps.en"
    both = ["--ref", str(tmp_path / "r.en"), "--ref", str(tmp_path / "r2.en")]
    result = here(*args, *both, "--json", "--output", str(hyps), env_extra=env)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    refs = [(tmp_path / name).read_text().splitlines() for name in ("r.en", "r2.en")]
    for metric in (BLEU(), CHRF(), TER()):
        want = metric.corpus_score(hyps.read_text().splitlines(), refs)
        name = type(metric).__name__.lower()
        assert got[name] == round(want.score, 2), (name, got)
    assert got["signature"].startswith("nrefs:2|") and got["data"].endswith("r.en + " + both[3])


@pytest.mark.parametrize("files", [False, True], ids=["split", "src-ref"])
def test_eval_set_overrides_the_decoding_settings(trained, tmp_path, files, here):
    run, _, env = trained
    extra = []
    if files:
        (tmp_path / "s.de").write_text("Ein Hund läuft.\nDie alte Frau liest ein Buch.\n")
        (tmp_path / "r.en").write_text("A dog runs.\nThe old woman reads a book.\n")
        extra = ["--src", str(tmp_path / "s.de"), "--ref", str(tmp_path / "r.en")]
    out = tmp_path / "hyps.txt"
    result = here(
        "eval",
        "--checkpoint",
        str(run / "best.pt"),
        "--json",
        "--output",
        str(out),
        *extra,
        *("--set", "decode.beam=1", "--set", "decode.max_len_a=0", "--set", "decode.max_len_b=1"),
        *("--set", "decode.len_penalty=1.4"),
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert row["beam"] == 1 and row["len_penalty"] == 1.4  # the saved config says 2 and 1.0
    hyps = out.read_text().splitlines()
    assert hyps and all(len(h.split()) <= 1 for h in hyps), hyps  # one subword at most
    bad = here("eval", "--checkpoint", str(run / "best.pt"), *extra, "--set", "decode.bem=1")
    assert bad.returncode == 2 and "decode.bem" in bad.stderr, bad.stderr


def test_a_program_that_waits_for_each_line_gets_it(trained, here):
    """translate as a coprocess: a line written to its standard input, the pipe left open,
    comes back translated without waiting for more lines or the end of input."""
    import select
    import subprocess
    import sys

    run, _, env = trained
    args = [sys.executable, "-m", "translator", "translate", "--checkpoint", str(run / "best.pt")]
    want = here(*args[3:], "Ein Hund läuft.", "Die Katze schläft.", env_extra=env).stdout
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, **env})  # fmt: skip
    try:
        got = []
        for line in ("Ein Hund läuft.", "Die Katze schläft."):
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            assert select.select([proc.stdout], [], [], 120)[0], f"no answer to {line!r}"
            got.append(proc.stdout.readline().decode())
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0 and proc.stdout.read() == b""
    finally:
        proc.kill()
    assert "".join(got) == want


def test_translate_arguments_and_stdin_keep_lines(trained, here):
    run, _, env = trained
    lines = ["Ein Hund läuft.", "", "Die Katze schläft.", "   ", "Ein Mann liest ein Buch."]
    result = cli(
        "translate",
        "--checkpoint",
        str(run / "best.pt"),
        stdin="\n".join(lines) + "\n",
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.split("\n")[:-1]
    assert len(out) == len(lines)
    assert out[1] == "" and out[3] == ""
    args = here(
        "translate",
        "--checkpoint",
        str(run / "best.pt"),
        lines[0],
        lines[2],
        lines[4],
        env_extra=env,
    )
    assert args.returncode == 0, args.stderr
    assert args.stdout.split("\n")[:-1] == [out[0], out[2], out[4]]


def test_user_errors_are_one_line_exit_2(tmp_path, here):
    bad = tmp_path / "bad.yaml"
    bad.write_text("train:\n  lrr: 0.1\n")
    result = here("train", "--config", str(bad))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "train.lrr" in result.stderr and str(bad) in result.stderr
    result = here("eval", "--checkpoint", str(tmp_path / "missing.pt"))
    assert result.returncode == 2 and "missing.pt" in result.stderr
    assert "Traceback" not in result.stderr


def run_steps(run_dir, max_steps, resume=False):
    cfg = config_from_dict(
        {**TINY, "run_dir": str(run_dir)}, overrides=[f"train.max_steps={max_steps}"]
    )
    trainer = Trainer(cfg, resume=resume)
    trainer.run()
    return trainer


def test_resume_continues_exactly(tmp_path):
    """N steps straight equal N/2 steps, a stop, and N/2 more after --resume."""
    straight = run_steps(tmp_path / "straight", 12)
    half = run_steps(tmp_path / "halves", 6)
    assert half.state.step == 6
    epochs_per_run = straight.state.epoch
    assert epochs_per_run >= 1  # the run crosses an epoch boundary, so data order matters
    resumed = run_steps(tmp_path / "halves", 12, resume=True)
    assert resumed.state.step == 12
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    opt_a, opt_b = straight.optimizer.state_dict()["state"], resumed.optimizer.state_dict()["state"]
    assert all(torch.equal(opt_a[k]["exp_avg"], opt_b[k]["exp_avg"]) for k in opt_a)
    # and the check has teeth: a fresh 6-step run from the same start is not the same model
    other = run_steps(tmp_path / "other", 6)
    assert not all(torch.equal(a[n], other.model.state_dict()[n]) for n in a)


def test_translate_file_nbest_and_interactive(trained, tmp_path, here):
    run, _, env = trained
    ckpt = str(run / "best.pt")
    lines = ["Ein Hund läuft.", "", "Die Katze schläft.", "Ein Mann liest ein Buch."]
    src = tmp_path / "in.de"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.en"
    result = here(
        "translate", "--checkpoint", ckpt, "--input", str(src), "--output", str(out), env_extra=env
    )
    assert result.returncode == 0, result.stderr
    written = out.read_text().split("\n")[:-1]
    assert len(written) == len(lines) and written[1] == ""
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left

    result = here(
        "translate", "--checkpoint", ckpt, "--input", str(src), "--nbest", "3", env_extra=env
    )
    assert result.returncode == 0, result.stderr
    rows = [r.split("\t") for r in result.stdout.splitlines()]
    assert len(rows) == 3 * len(lines)
    assert [int(r[0]) for r in rows] == [i for i in range(len(lines)) for _ in range(3)]
    for i in (0, 2, 3):
        scores = [float(r[1]) for r in rows[3 * i : 3 * i + 3]]
        assert scores == sorted(scores, reverse=True)
        assert rows[3 * i][2] == written[i]  # the 1-best of --nbest is the plain translation

    result = cli(
        "translate",
        "--checkpoint",
        ckpt,
        "--interactive",
        stdin="Ein Hund läuft.\nDie Katze schläft.\n",
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    answers = [line for line in result.stdout.split("de> ") if line.startswith("en> ")]
    assert [a.strip()[4:] for a in answers] == [written[0], written[2]]


def test_translate_and_eval_output_files_get_the_usual_mode(trained, tmp_path, here):
    run, _, env = trained
    ckpt = str(run / "best.pt")
    src = tmp_path / "in.de"
    src.write_text("Ein Hund läuft.\n")
    old = os.umask(0o022)  # the command inherits it
    try:
        translated = here(
            "translate",
            "--checkpoint",
            ckpt,
            "--beam",
            "1",
            "--input",
            str(src),
            "--output",
            str(tmp_path / "t.en"),
            env_extra=env,
        )
        evaluated = here(
            "eval",
            "--checkpoint",
            ckpt,
            "--beam",
            "1",
            "--src",
            str(src),
            "--ref",
            str(src),
            "--output",
            str(tmp_path / "e.en"),
            env_extra=env,
        )
    finally:
        os.umask(old)
    assert translated.returncode == 0 and evaluated.returncode == 0, translated.stderr
    for name in ("t.en", "e.en"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name


def test_very_long_line_is_cut_with_a_warning_and_translated(trained):
    run, _, env = trained
    long_line = " ".join(["Ein Hund läuft."] * 700)  # over 10,000 characters
    assert len(long_line) > 10_000
    result = cli(
        "translate",
        "--checkpoint",
        str(run / "best.pt"),
        "--beam",
        "1",
        stdin=long_line + "\nDie Katze schläft.\n",
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    assert "cut to the model's limit" in result.stderr
    assert len(result.stdout.split("\n")[:-1]) == 2


def test_eval_by_length_plot_and_attention_pictures(trained, tmp_path, here):
    run, _, env = trained
    ckpt = str(run / "best.pt")
    plot = tmp_path / "by_length.png"
    result = here(
        "eval",
        "--checkpoint",
        ckpt,
        "--checkpoint",
        ckpt,
        "--beam",
        "1",
        "--by-length",
        "--json",
        "--plot",
        str(plot),
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 2 and sum(b["n"] for b in rows[0]["by_length"]) == 20
    assert plot.read_bytes()[:4] == b"\x89PNG"
    picture = tmp_path / "attention.png"
    result = here(
        "translate",
        "--checkpoint",
        ckpt,
        "--plot-attention",
        str(picture),
        "Ein Hund läuft.",
        env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    assert picture.read_bytes()[:4] == b"\x89PNG" and len(result.stdout.splitlines()) == 1
    result = here(
        "translate",
        "--checkpoint",
        ckpt,
        "--plot-attention",
        str(picture),
        "--layer",
        "3",
        "Ein Hund läuft.",
        env_extra=env,
    )
    assert result.returncode == 2 and "--layer 3" in result.stderr


def test_attention_free_lstm_says_it_has_no_attention_to_draw(tmp_path, here):
    cfg = config_from_dict(
        tiny_config(
            run_dir=str(tmp_path / "lstm"),
            train={"max_steps": 2},
            model={"type": "lstm", "embed_dim": 16, "hidden_size": 16},
        )
    )
    Trainer(cfg).run()
    result = here(
        "translate",
        "--checkpoint",
        str(tmp_path / "lstm" / "last.pt"),
        "--plot-attention",
        str(tmp_path / "a.png"),
        "Ein Hund läuft.",
    )
    assert result.returncode == 2 and "no attention" in result.stderr
    assert not (tmp_path / "a.png").exists()
