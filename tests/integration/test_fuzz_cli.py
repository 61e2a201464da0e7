"""Property-based tests of the command line: whatever numbers, device names and files the
options are given, a command succeeds or fails with one `error:` line and exit code 2,
never a traceback. The commands run in-process (translator.cli.main) on a checkpoint
trained once for the module; `make fuzz` tries 20 times as many examples."""

from __future__ import annotations

import pytest
from checkpoints import trained_checkpoint
from commandline import assert_success_or_one_error, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from util import fuzz_examples


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return trained_checkpoint(tmp_path_factory.mktemp("fuzz_cli"))


numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "0", "-0", "1e-320", "0x10", "", " ", "1_0"]),
)
DECODE_OPTIONS = ["--beam", "--len-penalty", "--max-len-a", "--max-len-b", "--batch-size"]
DEVICES = st.one_of(
    st.sampled_from(["auto", "cpu", "cuda", "cuda:0", "cuda:9", "mps", "cuda:", "CPU", "gpu"]),
    st.text(max_size=8),
)


@settings(max_examples=fuzz_examples(25))
@given(
    option=st.sampled_from([*DECODE_OPTIONS, "--nbest"]),
    value=numbers,
    device=DEVICES,
)
def test_translate_numbers_and_devices(capsys, checkpoint, option, value, device):
    code, out, err = run_cli(
        capsys, "translate", "--checkpoint", checkpoint, option, value, "--device", device, "Ein"
    )
    assert_success_or_one_error(code, err)
    if code == 0:
        assert out.count("\n") >= 1


@settings(max_examples=fuzz_examples(15))
@given(
    option=st.sampled_from(["--temperature", "--seed"]),
    value=numbers,
    spec=st.sampled_from(["topk:3", "topp:0.5", "topk:100000", "topp:0", "topp:nan", "x"]),
)
def test_sampling_numbers(capsys, checkpoint, option, value, spec):
    args = ["--sampling", spec, option, value, "Ein"]
    code, _, err = run_cli(capsys, "translate", "--checkpoint", checkpoint, *args)
    assert_success_or_one_error(code, err)


@settings(max_examples=fuzz_examples(15))
@given(option=st.sampled_from(DECODE_OPTIONS), value=numbers, split=st.sampled_from(["dev", "x"]))
def test_eval_numbers(capsys, checkpoint, option, value, split):
    args = ["--split", split, option, value]
    code, out, err = run_cli(capsys, "eval", "--checkpoint", checkpoint, *args)
    if assert_success_or_one_error(code, err) is None:
        assert "BLEU" in out


@settings(max_examples=fuzz_examples(20))
@given(
    key=st.sampled_from(
        ["decode.beam", "decode.max_len_a", "decode.len_penalty", "decode.batch_size", "seed"]
    ),
    value=numbers,
)
def test_eval_set_numbers(capsys, checkpoint, key, value):
    code, _, err = run_cli(
        capsys, "eval", "--checkpoint", checkpoint, "--split", "dev", "--set", f"{key}={value}"
    )
    assert_success_or_one_error(code, err)


@settings(max_examples=fuzz_examples(15))
@given(content=st.binary(max_size=64), kind=st.sampled_from(["pt", "dir", "summary"]))
def test_files_of_our_formats_with_garbage_inside(capsys, tmp_path, content, kind):
    if kind == "pt":
        path = tmp_path / "garbage.pt"
        path.write_bytes(b"PK" + content)
        args = ["translate", "--checkpoint", path, "Ein"]
    elif kind == "dir":
        path = tmp_path / "export"
        path.mkdir(exist_ok=True)
        (path / "manifest.json").write_bytes(content)
        args = ["translate", "--checkpoint", path, "Ein"]
    else:
        path = tmp_path / "summary.json"
        path.write_bytes(content)
        args = ["curves", path, "--plot", tmp_path / "curves.png"]
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert_success_or_one_error(code, err)
