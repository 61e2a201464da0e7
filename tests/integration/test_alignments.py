"""Word alignments as users get them: `translate --alignments` (a TAB column of "i-j" pairs
after each translation, for every family with attention, n-best lines and resumable
files), `score --alignments`, the server's "alignments", and the CTranslate2 export."""

import json
import threading
from contextlib import contextmanager

import pytest
from checkpoints import needs_ct2, untrained
from util import tiny_config

from translator.config import config_from_dict
from translator.data.pharaoh import read_pharaoh
from translator.decode import resumable, translate_io
from translator.engines.load import load_engine
from translator.train.trainer import Trainer

LINES = ["Ein Hund läuft.", "", "Die alte Frau liest ein Buch.", "Zwei Katzen spielen."]


@pytest.fixture(scope="module")
def families(tmp_path_factory, three_steps):
    """tiny_config checkpoints of 3 steps that share one tokenizer: each family with
    attention, and the one without."""
    root = tmp_path_factory.mktemp("aligning")
    out = {"transformer": three_steps}
    for name in ("bahdanau", "luong", "lstm"):
        model = {"type": name, "embed_dim": 16, "hidden_size": 16}
        Trainer(config_from_dict(tiny_config(run_dir=str(root / name), model=model,
                                             train={"max_steps": 3}))).run()  # fmt: skip
        out[name] = root / name / "last.pt"
    return out


def assert_valid(pairs, source: str, target: str) -> None:
    """Every translated word aligned to exactly one source word, all indices in range."""
    assert [j for _, j in sorted(pairs, key=lambda p: p[1])] == list(range(len(target.split())))
    assert all(0 <= i < len(source.split()) for i, _ in pairs)
    assert list(pairs) == sorted(pairs)


def rows(stdout: str) -> list[list[str]]:
    return [line.split("\t") for line in stdout.split("\n")[:-1]]


@pytest.mark.parametrize("name", ["transformer", "bahdanau", "luong", "ensemble"])
def test_translate_adds_an_alignment_column_and_changes_no_translation(families, here, name):
    given = [families["transformer"], families["bahdanau"]] if name == "ensemble" else None
    ckpts = [str(p) for p in given or [families[name]]]
    args = [a for c in ckpts for a in ("--checkpoint", c)] + (["--ensemble"] if given else [])
    plain = here("translate", *args, *LINES)
    aligned = here("translate", *args, "--alignments", *LINES)
    assert aligned.returncode == 0, aligned.stderr
    found = rows(aligned.stdout)
    assert [r[0] for r in found] == plain.stdout.split("\n")[:-1]
    assert all(len(r) == 2 for r in found)
    for line, (text, column) in zip(LINES, found):
        assert_valid(read_pharaoh(column), line, text)
    assert found[1] == ["", ""]  # a blank line: no translation, no pairs


def test_a_family_without_attention_is_refused_in_one_line(families, here):
    result = here("translate", "--checkpoint", str(families["lstm"]), "--alignments", "Ein Hund.")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--alignments" in result.stderr
    assert "attention" in result.stderr


def test_nbest_sampling_and_constrained_lines_carry_their_own_alignment(families, here):
    ckpt = str(families["transformer"])
    nbest = here("translate", "--checkpoint", ckpt, "--alignments", "--nbest", "3", "--beam", "3",
                 LINES[0], LINES[2])  # fmt: skip
    assert nbest.returncode == 0, nbest.stderr
    found = rows(nbest.stdout)
    assert len(found) == 6 and all(len(r) == 4 for r in found)
    for index, _score, text, column in found:
        assert_valid(read_pharaoh(column), [LINES[0], LINES[2]][int(index)], text)
    for extra in (["--sampling", "topk:5", "--seed", "3"], ["--constraint", "Buch"]):
        result = here("translate", "--checkpoint", ckpt, "--alignments", *extra, LINES[2])
        assert result.returncode == 0, result.stderr
        ((text, column),) = rows(result.stdout)
        assert_valid(read_pharaoh(column), LINES[2], text)


def test_the_forced_output_aligns_as_the_search_did(families):
    """The constrained search keeps no attention: its outputs are read through the model
    again, which must give the weights the search itself would have kept."""
    engine = load_engine(families["bahdanau"], "cpu")
    request = engine.request(alignments=True)
    searched = engine.translate(LINES, request)
    forced = engine.score(LINES, [h[0].text for h in searched], request)
    agree = [s[0].alignment == f.alignment for s, f in zip(searched, forced) if s[0].text]
    assert sum(agree) >= len(agree) - 1  # (a text that tokenizes anew may differ)


def test_score_gives_the_forced_references_alignment(families, here, tmp_path):
    src, tgt = tmp_path / "s.txt", tmp_path / "t.txt"
    targets = ["A dog runs.", "Nothing.", "The old woman reads a book.", "Two cats play."]
    src.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(targets) + "\n", encoding="utf-8")
    ckpt = str(families["transformer"])
    result = here("score", "--checkpoint", ckpt, "--src", str(src), "--tgt", str(tgt),
                  "--alignments")  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = rows(result.stdout)
    assert all(len(r) == 4 for r in found) and found[1][3] == ""
    for line, target, row in zip(LINES, targets, found):
        if line:
            assert_valid(read_pharaoh(row[3]), line, target)
    plain = here("score", "--checkpoint", ckpt, "--src", str(src), "--tgt", str(tgt))
    assert [r[:3] for r in found] == rows(plain.stdout)
    lstm = here("score", "--checkpoint", str(families["lstm"]), "--src", str(src), "--tgt",
                str(tgt), "--alignments")  # fmt: skip
    assert lstm.returncode == 2 and "--alignments" in lstm.stderr


class Stopping:
    """An engine that stops (like Ctrl-C) before its second call."""

    def __init__(self, engine):
        self.engine, self.calls = engine, 0

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def translate(self, lines, request, progress=False):
        if self.calls:
            raise KeyboardInterrupt
        self.calls += 1
        return self.engine.translate(lines, request)


def test_a_file_resumes_with_its_column_and_not_from_a_run_without_it(
    families, here, tmp_path, monkeypatch
):
    ckpt = families["bahdanau"]
    src, whole = tmp_path / "in.txt", tmp_path / "whole.txt"
    src.write_text("\n".join(LINES * 2) + "\n", encoding="utf-8")
    result = here("translate", "--checkpoint", str(ckpt), "--alignments", "--input", str(src),
                  "--output", str(whole))  # fmt: skip
    assert result.returncode == 0, result.stderr
    engine = load_engine(ckpt, "cpu")
    stamps = resumable.model_stamps([ckpt])
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 3)
    out = tmp_path / "out.txt"
    plain = engine.request()
    with pytest.raises(KeyboardInterrupt):  # a run without the column stops half-way
        resumable.translate_file(Stopping(engine), src, out, plain, stamps)
    aligned = engine.request(alignments=True)
    with pytest.raises(KeyboardInterrupt):  # so this one starts over, then stops too
        resumable.translate_file(Stopping(engine), src, out, aligned, stamps)
    assert all("\t" in line for line in out.with_name("out.txt.partial").read_text().splitlines())
    resumable.translate_file(engine, src, out, aligned, stamps)
    assert out.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")


@contextmanager
def serving(engine, path, batching: str):
    from fastapi.testclient import TestClient

    from translator.serve.app import create_app
    from translator.serve.limits import Limits
    from translator.serve.parse import Door
    from translator.serve.streaming import make_batcher

    limits = Limits(batch_size=8, batching=batching)
    batcher = make_batcher(engine, limits)
    app = create_app(engine, str(path), limits, batcher, Door(engine, limits, engine.cfg.decode))
    decoder = threading.Thread(target=batcher.run)
    decoder.start()
    try:
        with TestClient(app.app) as client:
            yield client
    finally:
        batcher.stop()
        decoder.join()


@pytest.mark.parametrize("batching", ["batch", "continuous"])
def test_the_server_answers_alignments_beside_translations(families, batching):
    path = families["transformer"]
    engine = load_engine(path, "cpu")
    want = engine.translate(LINES, engine.request(alignments=True))
    with serving(engine, path, batching) as client:
        answer = client.post("/translate", json={"texts": LINES, "alignments": True}).json()
        assert answer["translations"] == [h[0].text for h in want]
        assert answer["alignments"] == [[list(p) for p in h[0].alignment or ()] for h in want]
        assert answer["alignments"][1] == []
        assert "alignments" not in client.post("/translate", json={"text": LINES[0]}).json()
        body = {"text": LINES[2], "alignments": True, "nbest": 2, "beam": 2}
        nbest = client.post("/translate", json=body).json()["nbest"][0]
        for hyp in nbest:
            assert_valid([tuple(p) for p in hyp["alignment"]], LINES[2], hyp["text"])
    lstm = load_engine(families["lstm"], "cpu")
    with serving(lstm, families["lstm"], "batch") as client:
        refused = client.post("/translate", json={"text": LINES[0], "alignments": True})
        assert refused.status_code == 400 and set(refused.json()) == {"error"}
        assert "alignments" in refused.json()["error"]


@needs_ct2
def test_an_export_aligns_from_the_same_layer_as_its_checkpoint(transformer, tmp_path, here):
    path, engine = transformer
    folder = tmp_path / "ct2"
    assert here("export", "--checkpoint", path, "--format", "ctranslate2", "--output",
                str(folder)).returncode == 0  # fmt: skip
    exported = load_engine(folder, "cpu")
    texts = [s for s in LINES if s] + ["Ein Mann liest.", "Das Kind trinkt Wasser."]
    ours = engine.translate(texts, engine.request(alignments=True))
    theirs = exported.translate(texts, exported.request(alignments=True))
    same = [
        (a[0].alignment, b[0].alignment) for a, b in zip(ours, theirs) if a[0].text == b[0].text
    ]
    assert len(same) >= len(texts) - 1
    pairs = sum(len(a) for a, _ in same)
    agree = sum(len(set(a) & set(b)) for a, b in same)
    assert agree >= 0.9 * pairs, same
    # a sentence's alignment does not depend on the batch its beam search ran in, among
    # sentences of many lengths
    from pretrained import demo_pairs

    many = [s for s, _ in demo_pairs()["test"]][:30]
    many += [" ".join(many[i : i + 3]) for i in range(0, len(many), 3)]
    request = exported.request(alignments=True)
    batched = [h[0].alignment for h in exported.translate(many, request)]
    assert batched == [exported.translate([t], request)[0][0].alignment for t in many]
    targets = [h[0].text for h in ours]
    request = engine.request(alignments=True)
    forced = [
        s.alignment for s in exported.score(texts, targets, exported.request(alignments=True))
    ]
    assert forced == [s.alignment for s in engine.score(texts, targets, request)]


@needs_ct2
@pytest.mark.parametrize("head", [None, 1])
def test_an_export_reads_the_alignment_layer_below_the_last_and_its_head(tmp_path, head):
    """CTranslate2 returns the weights of the layer and heads the checkpoint aligns from:
    compared as matrices, as a fresh model's outputs are too short to tell by their pairs."""
    import torch
    from checkpoints import untrained

    from translator.engines.export import export_checkpoint

    path = untrained(tmp_path, dec_layers=3, heads=4, alignment_head=head)
    export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2")
    engine, exported = load_engine(path, "cpu"), load_engine(tmp_path / "ct2", "cpu")
    layer = engine.model.alignment_layer
    assert layer == 1  # not the last: a layer CTranslate2 must be told
    pieces = engine.tokenizer.tgt.id_to_piece
    for text in [s for s in LINES if s]:
        best, source, target, ours = engine.attention(text, engine.request(), layer)
        other = engine.attention(text, engine.request(), -1)[3]
        found = exported.engine.translate_batch(
            [source], target_prefix=[[pieces(t) for t in best.tokens]], beam_size=1,
            max_decoding_length=len(best.tokens) + 1, return_attention=True,
        )[0].attention[0][: len(best.tokens)]  # fmt: skip
        theirs = torch.tensor(found)
        assert torch.allclose(theirs, torch.as_tensor(ours[: len(found)]), atol=1e-4)
        assert not torch.allclose(theirs, torch.as_tensor(other[: len(found)]), atol=1e-4)
    manifest = json.loads((tmp_path / "ct2" / "manifest.json").read_text())
    assert manifest["alignment"] == {"layer": 1, "heads": 4 if head is None else 1}


@needs_ct2
def test_an_export_whose_manifest_names_no_alignment_layer_says_so_once(
    transformer, tmp_path, caplog
):
    """Such an export aligns from CTranslate2's default attention, not the checkpoint's."""
    from translator.engines.export import export_checkpoint

    path, _ = transformer
    _, folder = export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2")
    manifest = json.loads((folder / "manifest.json").read_text())
    exported = load_engine(folder, "cpu")
    with caplog.at_level("WARNING"):
        exported.translate(LINES[:2], exported.request(alignments=True))
    assert "export the checkpoint again" not in caplog.text
    del manifest["alignment"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    unrecorded = load_engine(folder, "cpu")
    with caplog.at_level("WARNING"):
        unrecorded.translate(LINES[:1], unrecorded.request())
        assert "export the checkpoint again" not in caplog.text
        for _ in range(2):
            unrecorded.translate(LINES[:2], unrecorded.request(alignments=True))
    assert caplog.text.count("does not say which attention it aligns words with") == 1


def test_an_ensemble_aligning_from_other_layers_names_each_models(tmp_path):
    """A two-layer Transformer aligns from its layer -2 (model.alignment_layer), an RNN from
    its one attention (-1): the refusal says so, rather than asking for another depth."""
    from translator.decode.request import DecodeRequest
    from translator.errors import UserError

    (tmp_path / "t").mkdir()
    (tmp_path / "r").mkdir()
    deep = untrained(tmp_path / "t", dec_layers=2, enc_layers=2)
    rnn = untrained(tmp_path / "r", type="bahdanau", embed_dim=16, hidden_size=16)
    engine = load_engine([deep, rnn], "cpu", ensemble=True)
    request = DecodeRequest(engine.cfg.decode, alignments=True)
    with pytest.raises(UserError) as err:
        engine.translate(["Ein Hund läuft."], request)
    assert "model 1 from -2, model 2 from -1" in err.value.message
    assert "model.alignment_layer" in err.value.message
