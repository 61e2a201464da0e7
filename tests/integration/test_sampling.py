"""translate --sampling: top-k and nucleus sampling over the search's loop, seeded."""

from util import at_once, cli


def test_sampling_errors_through_the_command_line(tmp_path, here):
    (tmp_path / "x.pt").touch()  # named before it is loaded
    result = here("translate", "--checkpoint", str(tmp_path / "x.pt"), "--sampling", "topk:0", "a")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: --sampling 'topk:0'")


def test_translate_samples_reproducibly_with_a_seed(three_steps):
    lines = "Ein Hund läuft.\nZwei Katzen schlafen.\n\nDrei Männer lachen.\n"
    args = ["translate", "--checkpoint", str(three_steps), "--nbest", "3"]
    args += ["--sampling", "topp:0.95", "--temperature", "1.5", "--batch-size", "2"]
    first = cli(*args, "--seed", "7", stdin=lines)
    assert first.returncode == 0, first.stderr
    rows = [line.split("\t") for line in first.stdout.splitlines()]
    assert [int(r[0]) for r in rows] == [i for i in range(4) for _ in range(3)]
    assert len({r[2] for r in rows if r[0] == "0"}) > 1  # three draws, not one output thrice
    again, other = at_once(
        lambda: cli(*args, "--seed", "7", stdin=lines),
        lambda: cli(*args, "--seed", "8", stdin=lines),
    )
    assert again.stdout == first.stdout and other.stdout != first.stdout
