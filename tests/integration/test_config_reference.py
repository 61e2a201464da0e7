"""docs/configuration.md: generated from the typed config, current, and every key described."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from util import ROOT


def test_neither_the_config_nor_the_reference_loads_torch():
    script = ROOT / "scripts" / "tools" / "config_reference.py"
    code = textwrap.dedent(
        f"""
        import runpy, sys
        import translator.config
        assert 'torch' not in sys.modules, 'translator.config loads torch'
        sys.argv = ['config_reference.py', '--check']
        try:
            runpy.run_path({str(script)!r}, run_name='__main__')
        except SystemExit:  # stale or not, only the imports matter here
            pass
        assert 'torch' not in sys.modules, 'the reference script loads torch'
        print('ok')
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
