# SPDX-License-Identifier: GPL-2.0
"""pytest setup shared by the Python suites.

Backend of the conformance suite: whatever davinci discovery finds. Unless
DAVINCI_DEV_DIR or DAVINCI_BACKEND is set when pytest starts, the tests
under tests/conformance run on the in-process core (DAVINCI_BACKEND=inproc),
so the suite needs no daemon and no module. To run it on the FUSE daemon:
DAVINCI_DEV_DIR=<mountpoint>; on the kernel module: DAVINCI_DEV_DIR=/dev.
Other suites (tests/fuse, tests/kmod) are left to choose their backend.
"""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USERSPACE = os.path.join(REPO, "userspace")
if _USERSPACE not in sys.path:
    sys.path.insert(0, _USERSPACE)

#: True when the conformance suite picks the in-process backend itself.
DEFAULT_INPROC = not os.environ.get("DAVINCI_DEV_DIR") and \
    not os.environ.get("DAVINCI_BACKEND")
_CONFORMANCE = os.path.join(REPO, "tests", "conformance") + os.sep


def uses_default_backend(path) -> bool:
    return DEFAULT_INPROC and str(path).startswith(_CONFORMANCE)


@pytest.fixture(autouse=True)
def _davinci_default_backend(request, monkeypatch):
    if uses_default_backend(request.node.fspath):
        monkeypatch.setenv("DAVINCI_BACKEND", "inproc")
    yield


def pytest_report_header(config):
    if DEFAULT_INPROC:
        return "davinci conformance backend: in-process core (default)"
    try:
        import davinci
        b = davinci.find_backend()
        return "davinci backend: %s, %d device(s)" % (b.describe(),
                                                      b.device_count())
    except Exception as exc:  # noqa: BLE001
        return "davinci backend: none (%s)" % exc
