"""Fixtures the server tests share (test_serve.py, test_serve_page.py): trained once a run."""

import pytest
from serving import Server, train

from translator.engines.load import load_engine


@pytest.fixture(scope="session")
def transformer(tmp_path_factory):
    path = train(tmp_path_factory.mktemp("serve") / "run")
    return path, load_engine(path, "cpu")


@pytest.fixture(scope="session")
def lstm(tmp_path_factory):
    path = train(tmp_path_factory.mktemp("serve-lstm") / "run", type="lstm", hidden_size=32)
    return path, load_engine(path, "cpu")


@pytest.fixture(scope="session")
def server(transformer, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve-log") / "server.log"
    limits = ["--max-body", "3000", "--max-texts", "8", "--max-chars", "200", "--max-beam", "4"]
    srv = Server(transformer[0], log, *limits)
    yield srv
    srv.stop()
