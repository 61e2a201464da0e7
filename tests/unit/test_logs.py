"""Logs a person can read: plain lines instead of progress bars where stderr is not a
terminal, RUN/train.log and RUN/validations.jsonl written while a run goes, and three dev
examples at each validation."""

import logging

import pytest
from tqdm import tqdm

from translator import progress
from translator.config import TrainConfig
from translator.progress import LogLines, TrainingBar, progress_bar


def test_progress_bars_on_a_terminal_and_log_lines_elsewhere(monkeypatch, caplog):
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    bar = progress_bar(total=3, desc="translate", unit="batch")
    assert type(bar) is tqdm and not bar.disable
    bar.close()
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    assert progress_bar(total=3, desc="train", unit="step", lines=False).disable
    assert progress_bar(total=3, desc="translate", unit="batch", enabled=False).disable
    with caplog.at_level(logging.INFO, logger="translator"):
        bar = progress_bar(total=3, desc="translate", unit="batch")
        assert isinstance(bar, LogLines) and caplog.messages == []  # no line for nothing done
        bar.update(2)  # within LINE_SECONDS of the start: no line yet
        assert caplog.messages == []
        bar.close()  # the closing line
        assert len(caplog.messages) == 1 and caplog.messages[0].startswith("translate: 2/3 (67%)")
        monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)
        for _ in progress_bar(range(2), desc="sample", unit=" pairs"):
            pass
    assert [m.split(",")[0] for m in caplog.messages[1:]] == [
        "sample: 1/2 (50%)",
        "sample: 2/2 (100%)",
    ]


@pytest.mark.parametrize("terminal", [True, False])
def test_the_training_line_goes_to_the_run_log_alone_on_a_terminal(monkeypatch, caplog, terminal):
    monkeypatch.setattr(progress, "on_terminal", lambda: terminal)
    noted = []
    tc = TrainConfig(max_steps=100, max_minutes=30)
    bar = TrainingBar(tc, step=0, elapsed=0.0, enabled=True, to_file=noted.append)
    for step in range(1, 11):
        bar.advance(step, elapsed=step * 6.0)
    with caplog.at_level(logging.INFO, logger="translator"):
        bar.report(10, 60.0, loss=4.25, lr=1e-3, rate=1234.0)
    bar.close()
    line = "step 10/100: loss 4.250, lr 1.00e-03, 1,234 target tokens/s, 1.0/30 min, ETA 09:00"
    assert (noted, caplog.messages) == (([line], []) if terminal else ([], [line]))
