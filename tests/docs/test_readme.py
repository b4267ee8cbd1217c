# SPDX-License-Identifier: GPL-2.0
"""The README's Python examples run as written (on the in-process core
unless a backend is chosen)."""

import os
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.fixture(autouse=True)
def _backend(monkeypatch):
    if not os.environ.get("DAVINCI_DEV_DIR"):
        monkeypatch.setenv("DAVINCI_BACKEND", "inproc")


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    exec(compile(BLOCKS[index], "README.md[python %d]" % index, "exec"), {})
