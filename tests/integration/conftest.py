"""Fixtures the server tests share (test_serve.py, test_serve_page.py): trained once a run;
the tiny model of three steps that the command line tests translate with; and `here`, the
command run in this process."""

import pytest
from commandline import cli_here
from serving import Server, train
from util import tiny_config

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.train.trainer import Trainer


@pytest.fixture(scope="session")
def transformer(tmp_path_factory):
    path = train(tmp_path_factory.mktemp("serve") / "run")
    return path, load_engine(path, "cpu")


@pytest.fixture(scope="session")
def lstm(tmp_path_factory):
    path = train(tmp_path_factory.mktemp("serve-lstm") / "run", type="lstm", hidden_size=32)
    return path, load_engine(path, "cpu")


@pytest.fixture(scope="session")
def three_steps(tmp_path_factory):
    """last.pt of tiny_config trained 3 steps, its run folder beside it: one for the modules
    that only read it (test_cli_errors, test_cli_options, test_ensemble, test_guided,
    test_sampling, test_score); whatever a test changes it copies first."""
    root = tmp_path_factory.mktemp("three-steps")
    Trainer(config_from_dict(tiny_config(run_dir=str(root / "run"), train={"max_steps": 3}))).run()
    return root / "run" / "last.pt"


@pytest.fixture(scope="session")
def server(transformer, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve-log") / "server.log"
    limits = ["--max-body", "3000", "--max-texts", "8", "--max-chars", "200", "--max-beam", "4"]
    srv = Server(transformer[0], log, *limits)
    yield srv
    srv.stop()


@pytest.fixture
def here(capsys, monkeypatch):
    """here(*args, env_extra=None): `translator ARGS` run in this process, its outcome read as
    a subprocess's (returncode, stdout, stderr), for tests whose point needs no process of its
    own. env_extra is set for the call only: variables the code reads when it runs
    (TRANSLATOR_CACHE), not at import."""

    def run(*args, env_extra=None):
        with monkeypatch.context() as env:
            for name, value in (env_extra or {}).items():
                env.setenv(name, value)
            return cli_here(capsys, *args)

    return run
