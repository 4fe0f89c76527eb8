"""scripts/check-servers.py: it finds the programs tests start, and refuses those setup does not install."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_servers", os.path.join(HERE, "..", "check-servers.py"))
assert spec and spec.loader
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def test_finds_the_programs_each_idiom_starts() -> None:
    assert check.programs_in('binary = shutil.which("etcd")') == ["etcd"]
    assert check.programs_in("command -v some-server >/dev/null || exit 1") == ["some-server"]
    assert check.programs_in("const child = spawn('tarantool', ['-e', script]);") == ["tarantool"]
    assert check.programs_in('subprocess.Popen(["redis-server", "--port", port])') == ["redis-server"]
    assert check.programs_in("PG = '/usr/lib/postgresql/15/bin/initdb'") == ["/usr/lib/postgresql/15/bin/initdb"]
    assert check.programs_in("x = which_one(value)") == []


def test_a_program_in_no_row_is_refused_and_a_listed_one_is_not() -> None:
    rows = check.table()
    started = {"etcd": "a:1", "/usr/lib/postgresql/15/bin/postgres": "b:2", "some-server": "c:3", "node": "d:4"}
    assert check.unprovided(rows, started) == ["some-server"]


def test_the_table_installs_the_servers_the_examples_start() -> None:
    packages = {package for package, _, _ in check.table()}
    # The fresh-machine failure of issue 21: etcd-server and postgresql were not installed.
    assert {"etcd-server", "postgresql", "redis-server", "chromium", "tarantool"} <= packages


def test_the_whole_tree_passes() -> None:
    assert check.unprovided(check.table(), check.started_programs()) == []
