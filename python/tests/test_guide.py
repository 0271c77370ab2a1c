"""The guide's page for Python runs: every ``python`` block of docs/guide/05-python.md, in
order, in one namespace, from the repository's root (as the page says)."""

import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "05-python.md"


def test_every_python_block_of_the_guide_runs(capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.S | re.M)
    assert len(blocks) >= 5, "the page's examples were found"
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace: dict = {}
        for i, code in enumerate(blocks):
            exec(compile(code, f"{PAGE.name}, python block {i + 1}", "exec"), namespace)
    finally:
        os.chdir(here)
    printed = capsys.readouterr().out
    # what the page's blocks print: M/M/1's exact response at rho 0.8, and the bad draft's line
    assert "5.0" in printed
    assert 'draft.toml:2: run.length: invalid type: string "long"' in printed
