"""The build's programs for the pytest suites (tests/server, tests/python, tests/format): ctest
passes their paths in the environment (DTB_DTBGEN, DTB_DTBPROBE)."""
import os

import pytest


def program(name):
    """The executable that environment variable name points to; the test fails when it is not
    set or not executable (run the suites through ctest)."""
    path = os.environ.get(name)
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"{name} must name the build's program (got {path!r})")
    return path
