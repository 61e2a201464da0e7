"""An imported model through the other commands, in this process: `info` shows its origin and
licence, `train --init-from` fine-tunes it on the demo data with a config of data and
training settings alone (keeping its piece tables, model keys and source record, and
resuming exactly), `average` keeps the source record, `translate` and `score` run on it.
The commands that decode or score with an imported model: test_pretrained_decoding.py."""

import pytest
import torch
import yaml
from commandline import SENTENCES, cli_captured, run_cli
from pretrained import marian_folder

from translator.models.checkpoint import Checkpoint

pytest.importorskip("transformers")

STEPS = 6  # validations, step checkpoints and last.pt at 3 and 6
# what a user writes to fine-tune: no model and no tokenizer section
FINETUNE = {
    "seed": 2,
    "data": {"dataset": "demo", "demo_train": 60, "demo_dev": 10, "demo_test": 10},
    "train": {
        "max_steps": STEPS,
        "batch_tokens": 400,
        "lr": 0.003,
        "warmup_steps": 2,
        "valid_every": 3,
        "save_every": 3,
        "keep_checkpoints": 2,
        "log_every": 1,
        "valid_beam": 1,
        "dtype": "fp32",
        "threads": 1,
    },
}


def ok(outcome):
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    return outcome


def finetune_config(folder, run_dir, **train) -> str:
    path = folder / f"{run_dir.name}.yaml"
    raw = {**FINETUNE, "run_dir": str(run_dir), "train": {**FINETUNE["train"], **train}}
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("imported")
    folder = marian_folder(root / "hf")
    ok(cli_captured("import", folder, "--output", root / "imported.pt"))
    return root / "imported.pt"


@pytest.fixture(scope="module")
def finetuned(imported, tmp_path_factory):
    """The run folder of STEPS steps of fine-tuning the imported model."""
    root = tmp_path_factory.mktemp("finetune")
    ok(
        cli_captured(
            "train", "--config", finetune_config(root, root / "run"), "--init-from", imported
        )
    )
    return root / "run"


def test_info_shows_the_origin_the_licence_and_the_card(imported, capsys):
    code, out, err = run_cli(capsys, "info", imported)
    assert code == 0, err
    assert "origin: imported from" in out and "huggingface-marian" in out
    assert "licence: CC-BY 4.0 (test)" in out
    assert "# tiny-marian" in out and "languages: de -> en" in out
    assert "piece tables" in out and "parameters" in out


def test_info_of_a_trained_checkpoint_and_of_bad_files(finetuned, tmp_path, capsys):
    code, out, err = run_cli(capsys, "info", finetuned / "last.pt", "--card")
    assert code == 0, err
    assert f"training: step {STEPS}" in out and "resumable" in out
    assert "licence: CC-BY 4.0 (test)" in out  # fine-tuning keeps the origin
    plain = tmp_path / "plain.pt"
    torch.save({"format": 1, "model": {}}, plain)  # no tokenizer: not a model checkpoint
    for path in (tmp_path / "missing.pt", finetuned / "config.yaml", plain):
        code, out, err = run_cli(capsys, "info", path)
        assert code == 2 and out == "" and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err


def test_finetuning_keeps_the_tokenizer_model_and_source(imported, finetuned):
    start, best = Checkpoint.load(imported), Checkpoint.load(finetuned / "best.pt")
    assert best.tokenizer == start.tokenizer  # piece tables and subword models, as imported
    assert best.config["model"] == start.config["model"]
    assert best.source == start.source
    assert best.config["train"]["max_steps"] == STEPS
    last = Checkpoint.load(finetuned / "last.pt")
    losses = [loss for _, loss in last.progress["losses"]]
    assert len(losses) == STEPS and losses[-1] < losses[0], losses
    dev = [entry["dev_loss"] for entry in last.progress["history"]]
    assert len(dev) == 2 and dev[-1] < dev[0], dev
    assert not torch.equal(best.model["src_embed.weight"], start.model["src_embed.weight"])


def test_the_prepared_training_data_holds_the_piece_table_ids(imported, tmp_path):
    from translator.config import config_from_dict
    from translator.data.corpus import open_source
    from translator.data.prepare import prepare

    tokenizer = Checkpoint.load(imported).build_tokenizer(str(imported))
    data = {**FINETUNE["data"], "prepared_dir": str(tmp_path / "prepared")}
    cfg = config_from_dict({**FINETUNE, "run_dir": str(tmp_path / "run"), "data": data})
    ids = prepare(cfg, tokenizer).ids
    pairs = list(open_source(cfg.data, cfg.seed).pairs("train"))
    wanted = {
        (tuple(s), tuple(t))
        for s, t in zip(
            tokenizer.encode_src([s for s, _ in pairs]), tokenizer.encode_tgt([t for _, t in pairs])
        )
    }
    rows = len(ids.src_offsets) - 1
    assert rows == len(pairs)
    for i in range(rows):
        src = tuple(int(x) for x in ids.src[ids.src_offsets[i] : ids.src_offsets[i + 1]])
        tgt = tuple(int(x) for x in ids.tgt[ids.tgt_offsets[i] : ids.tgt_offsets[i + 1]])
        assert (src, tgt) in wanted, i


def test_a_finetuning_run_resumes_exactly(imported, finetuned, tmp_path):
    config = finetune_config(tmp_path, tmp_path / "halves", max_steps=STEPS // 2)
    ok(cli_captured("train", "--config", config, "--init-from", imported))
    more = f"train.max_steps={STEPS}"
    ok(cli_captured("train", "--config", config, "--set", more, "--resume"))
    straight = Checkpoint.load(finetuned / "last.pt")
    resumed = Checkpoint.load(tmp_path / "halves" / "last.pt")
    assert resumed.progress["step"] == STEPS and resumed.source == straight.source
    for name, weight in straight.model.items():
        assert torch.equal(weight, resumed.model[name]), name


def test_average_keeps_the_source_record(imported, finetuned, tmp_path, capsys):
    steps = sorted(finetuned.glob("step-*.pt"))
    assert len(steps) == 2
    code, out, err = run_cli(capsys, "average", finetuned, "--output", tmp_path / "avg.pt")
    assert code == 0, err
    averaged = Checkpoint.load(tmp_path / "avg.pt")
    assert averaged.source == Checkpoint.load(imported).source
    assert averaged.tokenizer == Checkpoint.load(imported).tokenizer
    code, out, err = run_cli(capsys, "info", tmp_path / "avg.pt")
    assert code == 0 and "licence: CC-BY 4.0 (test)" in out, err


def test_translate_and_score_take_the_finetuned_model(finetuned, tmp_path, capsys):
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    tgt.write_text("A dog runs.\nThe old woman reads a book.\nTwo cats play.\n", encoding="utf-8")
    best = finetuned / "best.pt"
    common = ["--checkpoint", best, "--beam", "2", "--max-len-a", "0", "--max-len-b", "8"]
    code, out, err = run_cli(capsys, "translate", *common, "--input", src)
    assert code == 0, err
    assert len(out.splitlines()) == len(SENTENCES)
    code, out, err = run_cli(capsys, "score", "--checkpoint", best, "--src", src, "--tgt", tgt)
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == 3 and all(float(row[0]) < 0 for row in rows), out
