"""Data-parallel training: 2 CPU processes under torchrun with the gloo backend."""

from training import train_processes as run

from translator.engines.load import load_engine


def test_two_processes_match_one_process_with_twice_the_batch(tmp_path):
    ddp_dir, ddp, log = run(tmp_path, "ddp", 300, 2)
    # one process prepared the data; the other waited for it and mapped the same files
    assert log.count("training pairs kept") == 1, log[-3000:]
    prepared = list((tmp_path / "cache" / "prepared").glob("[!.]*"))  # not the lock file
    assert len(prepared) == 1 and not list(prepared[0].parent.glob(".*.tmp-*"))
    one_dir, one, log = run(tmp_path, "one", 600, 1)
    assert "training pairs kept" not in log  # the same data: prepared once, reused
    assert list((tmp_path / "cache" / "prepared").glob("[!.]*")) == prepared
    assert ddp["steps"] == one["steps"] == 40
    # The same number of target tokens per step, so the loss curves should agree closely.
    ddp_loss = dict((s, loss) for s, loss in ddp["losses"])
    one_loss = dict((s, loss) for s, loss in one["losses"])
    assert ddp_loss.keys() == one_loss.keys()
    late = [s for s in ddp_loss if s > 20]
    for step in late:
        assert abs(ddp_loss[step] - one_loss[step]) / one_loss[step] < 0.15, (step, ddp, one)
    assert ddp_loss[40] < ddp_loss[5]  # and it did learn
    # the checkpoint of the 2-process run loads and translates in one process
    translator = load_engine(str(ddp_dir / "last.pt"), "cpu")
    assert len(translator.translate(["Ein Hund läuft.", ""])) == 2
    assert (ddp_dir / "best.pt").is_file() and not list(ddp_dir.glob(".*.tmp"))
