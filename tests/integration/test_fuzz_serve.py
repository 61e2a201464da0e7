"""schemathesis against a running `translator serve`: requests generated from its own OpenAPI
schema, both those that fit it and those that do not, in both batching modes. No answer is a
5xx, every 4xx is the documented {"error": "one line"}, and the server is still up after."""

import pytest
from hypothesis import HealthCheck, given, settings
from serving import Server, get
from util import fuzz_examples

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
schemathesis = pytest.importorskip("schemathesis", reason="the `dev` extra (schemathesis)")

from schemathesis import GenerationMode  # noqa: E402


@pytest.fixture(scope="module", params=["batch", "continuous"])
def fuzzed_server(request, transformer, tmp_path_factory):
    log = tmp_path_factory.mktemp("fuzz-serve") / "server.log"
    # small limits, so that generated requests reach them and the searches stay short
    limits = ["--max-texts", "8", "--max-chars", "300", "--max-beam", "4", "--timeout", "20"]
    srv = Server(transformer[0], log, "--batching", request.param, *limits)
    yield srv
    srv.stop()


def check_answer(response) -> None:
    status = response.status_code
    assert status < 500, (status, response.text)
    if status >= 400:
        body = response.json()
        assert isinstance(body, dict) and set(body) == {"error"}, response.text
        assert isinstance(body["error"], str) and body["error"].strip(), response.text
        assert "\n" not in body["error"] and "Traceback" not in body["error"], response.text


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_generated_request_is_a_5xx_and_every_4xx_is_one_line_of_json(fuzzed_server, mode):
    schema = schemathesis.openapi.from_url(fuzzed_server.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {"/translate", "/score", "/attention", "/health"}
    if mode == GenerationMode.NEGATIVE:  # GET /health takes nothing to get wrong
        operations = [op for op in operations if op.method.upper() == "POST"]
    tried = []
    for operation in operations:

        @settings(
            max_examples=fuzz_examples(12),
            suppress_health_check=list(HealthCheck),
            deadline=None,
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case):
            tried.append(case)
            check_answer(case.call(base_url=fuzzed_server.url, timeout=60))

        run()
    assert len(tried) >= len(operations)
    print(f"{len(tried)} {mode.value} requests to {len(operations)} operations")  # make fuzz -s
    assert get(fuzzed_server.url + "/health")[0] == 200, fuzzed_server.log()
    assert fuzzed_server.proc.poll() is None, fuzzed_server.log()
