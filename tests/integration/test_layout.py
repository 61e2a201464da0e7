"""What a fresh process loads: reading a config loads no torch, and the models, the searches
and the loss load nothing of the data package (tests/unit/test_layout.py reads the imports
themselves)."""

import subprocess
import sys

import pytest

CASES = {
    "config": (
        "import translator.config\ntranslator.config.load_config\n",
        ("torch", "numpy", "sentencepiece"),
    ),
    # a mistyped file is named before torch is imported (the import takes seconds)
    "a missing checkpoint or config": (
        "from translator import cli\n"
        "for argv in (['translate', '--checkpoint', 'gone.pt', 'a'], ['serve', '--checkpoint',\n"
        "        'gone'], ['export', '--checkpoint', 'gone.pt', '--output', 'o'],\n"
        "        ['train', '--config', 'gone.yaml']):\n"
        "    sys.argv = ['translator', *argv]\n"
        "    try:\n"
        "        cli.main()\n"
        "    except SystemExit as end:\n"
        "        assert end.code == 2, end.code\n",
        ("torch",),
    ),
    "models, search, loss": (
        "import translator.decode.search, translator.train.loss\n"
        "from translator.models.family import build_model, model_config\n"
        "for family in ('transformer', 'lstm', 'bahdanau', 'luong'):\n"
        "    build_model(model_config(type=family), 40, 40, True)\n",
        ("translator.data", "sentencepiece"),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_fresh_process_loads_only_what_it_needs(case):
    code, unwanted = CASES[case]
    probe = (
        f"import sys\n{code}print(sorted(m for m in sys.modules if m.startswith({unwanted!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
