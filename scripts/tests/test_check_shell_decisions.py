"""scripts/check-shell-decisions.py: it finds a shell's literal timeout, timer and status
decision in each language, and passes comments, docstrings, strings, `decisions: ok` lines
and times read from the session's config."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "check-shell-decisions.py")
spec = importlib.util.spec_from_file_location("check_shell_decisions", SCRIPT)
assert spec and spec.loader
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

PY = '''"""A shell. timeout = 10 in a docstring is prose."""
import time

WAIT_S = 30
def poll(timeout: float = 10.0) -> None:
    """Sleeps: time.sleep(1) in a docstring is prose."""
    time.sleep(0.5)  # timeout = 3 in a comment is prose
    if status == 503:
        pass
    deadline = session.deadline
    message = "retry = 5 in a string is a message"
    if status == 200:  # a stream that opened
        pass
    # decisions: ok (RFC 9110: these have no body)
    empty = status in (204, 304)
'''
JS = '''// timeoutMs = 10000 in a comment is prose
const INTERVAL_MS = 1000;
constructor(urls, { timeoutMs = 10000 } = {}) {}
setTimeout(() => tick(), 100);
setTimeout(() => tick(), session.deadline - now);
if (status === 304) {}
/* idle = 5 in a block comment */
const url = 'http://host:2379'; // decisions are the session's
'''
RS = '''const TIMEOUT: Duration = Duration::from_secs(2);
fn wait(session: &Session) -> Option<u64> { session.deadline() }
// let retries = 3; in a comment
#[cfg(test)]
mod tests { const SLOW: Duration = Duration::from_secs(9); }
'''


def found(tmp_path: Path, name: str, text: str) -> list[int]:
    path = tmp_path / name
    path.write_text(text)
    return [int(line.split(":")[1]) for line in check.findings(str(path))]


def test_python(tmp_path: Path) -> None:
    assert found(tmp_path, "shell.py", PY) == [4, 5, 7, 8]


def test_javascript(tmp_path: Path) -> None:
    assert found(tmp_path, "shell.mjs", JS) == [2, 3, 4, 6]


def test_rust_up_to_its_tests(tmp_path: Path) -> None:
    assert found(tmp_path, "shell.rs", RS) == [1]


def test_the_shells_of_the_tree_pass() -> None:
    done = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    assert "exempt" not in done.stdout  # ZooKeeper's shells are checked too since issue 35
    assert "zookeeper.py" in done.stdout and "zookeeper.js" in done.stdout  # and counted
