"""scripts/check-ports.py: it finds a port picked by bind-0-then-close, in each language, and
passes a server that binds port 0 itself and keeps it."""

import importlib.util
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "check-ports.py")
spec = importlib.util.spec_from_file_location("check_ports", SCRIPT)
assert spec and spec.loader
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

PY_GUESSED = '''
import socket

def pick() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
'''
PY_CLOSED = '''
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
'''
PY_KEPT = '''
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
port = server.server_address[1]
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
port = listener.getsockname()[1]
threading.Thread(target=server.serve_forever).start()
'''
JS_GUESSED = '''
export function pick() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
'''
JS_KEPT = '''
const server = createServer(handler);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/`;
'''
JS_KEPT_WITH_CLOSE = '''
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    close: () => {
      server.close();
    },
  };
'''
RS_GUESSED = '''
fn pick() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
'''
RS_KEPT = '''
let listener = TcpListener::bind("127.0.0.1:0").unwrap();
let address = listener.local_addr().unwrap().to_string();
'''


def lines(path: str, text: str) -> list[int]:
    return [number for number, _ in check.findings(path, text)]


def test_a_port_bound_then_released_is_found_in_each_language() -> None:
    assert lines("a.py", PY_GUESSED) == [6]
    assert lines("a.py", PY_CLOSED) == [3]
    assert lines("a.mjs", JS_GUESSED) == [5]
    assert lines("a.rs", RS_GUESSED) == [3]


def test_a_helper_named_free_port_is_found_wherever_it_is_named() -> None:
    assert lines("a.py", "from harness import free_port\nport = free_port()\n") == [1, 2]
    assert lines("a.py", "def free_port() -> int:\n    return 1\n") == [1]
    assert lines("a.mjs", "const port = await freePort();\n") == [1]
    assert lines("a.rs", "let (client, peer) = (free_port(), free_port());\n") == [1]
    assert lines("a.py", "port = find_free_port()\n") == [1]


def test_a_server_that_binds_port_0_and_keeps_it_passes() -> None:
    assert lines("a.py", PY_KEPT) == []
    assert lines("a.mjs", JS_KEPT) == []
    assert lines("a.mjs", JS_KEPT_WITH_CLOSE) == []  # a close() for later, on the handle it returns
    assert lines("a.rs", RS_KEPT) == []
    assert lines("a.py", "ports = reserve_ports(2)\nstart_on_ports(1, start)\n") == []
    # Said to stay open: not reported.
    assert lines("a.py", PY_GUESSED.replace('probe.bind(("127.0.0.1", 0))', 'probe.bind(("127.0.0.1", 0))  # ports: ok')) == []


def test_the_script_exits_1_naming_file_and_line(tmp_path: object) -> None:
    guessed = os.path.join(str(tmp_path), "guessed.py")
    kept = os.path.join(str(tmp_path), "kept.py")
    with open(guessed, "w") as out:
        out.write(PY_GUESSED)
    with open(kept, "w") as out:
        out.write(PY_KEPT)
    failing = subprocess.run([sys.executable, SCRIPT, guessed], capture_output=True, text=True)
    assert failing.returncode == 1
    assert f"{guessed}:6:" in failing.stdout
    passing = subprocess.run([sys.executable, SCRIPT, kept], capture_output=True, text=True)
    assert (passing.returncode, passing.stdout) == (0, "")


def test_the_whole_tree_passes() -> None:
    assert subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True).returncode == 0
