"""Shared by the Python oracle tests: conformance/python (the topology document builder)
on the import path, and a run that fails at once, naming the install command, when an
oracle library or the shardroute package is missing: an oracle test is never skipped."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pathlib
import sys

import pytest

CONFORMANCE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CONFORMANCE / "python"))
# The examples' harness: ports for redis-server, reserved outside the ephemeral range
# (`start_on_ports`: fresh ones while one is taken).
sys.path.insert(0, str(CONFORMANCE.parent / "examples"))


def pytest_configure(config: pytest.Config) -> None:
    problems = []
    requirements = (CONFORMANCE / "requirements-oracles.txt").read_text(encoding="utf-8").split()
    missing = []
    for requirement in requirements:
        name = requirement.split("==")[0]
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        problems.append(
            f"oracle libraries not installed: {', '.join(missing)}; "
            "run `.venv/bin/pip install -r conformance/requirements-oracles.txt`"
        )
    if importlib.util.find_spec("shardroute") is None:
        problems.append("the shardroute package is not installed: build it with bindings-py/build.sh")
    if problems:
        raise pytest.UsageError("\n".join(problems))
