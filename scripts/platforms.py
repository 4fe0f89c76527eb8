#!/usr/bin/env python3
"""The platforms shardroute ships binaries for, and how `make dist` builds them.

One table (PLATFORMS) says, per platform, the Rust target, the linker, the wheel's tag,
the npm package of the Node addon (napi-rs' layout: `shardroute-<platform>`, one per
platform, each with its `os`, `cpu` and `libc`, all listed as optionalDependencies of
`shardroute`, so that `npm install shardroute` gets the one that fits), and how `make
test-dist` checks it. scripts/check-artifacts.py, scripts/test-dist-emulated.py and
bindings-node/index.js (which derives the package name the same way) follow it.

    scripts/platforms.py dist DIST          the cross wheels and every npm package of the addon into DIST
    scripts/platforms.py npm-project DIR DIST [--cpu CPU] [--libc LIBC]
                                            a scratch npm project in DIR with shardroute from DIST installed
                                            as npm would on that cpu and libc (the platform packages from DIST)
    scripts/platforms.py table              the table, for docs and a look

The host's wheel and addon (linux-x64-gnu) come from the usual builds (`maturin build`,
bindings-node/build.sh); `dist` packs that addon as its platform package. The other rows
are cross builds, all with Debian's rustc-web (/usr/bin/rustc; rustup here has only the
host's std) building std itself (`-Z build-std`, RUSTC_BOOTSTRAP=1) into target/cross:

- Linux aarch64, glibc: linked by Debian's gcc-aarch64-linux-gnu against its glibc 2.36;
  maturin's audit gives the manylinux tag the symbols need.
- Linux musl (x86_64, aarch64) and macOS (x86_64, arm64): linked by zig (PyPI's ziglang),
  through cargo-zigbuild's `zig cc` (the linker `maturin --zig` and `cargo zigbuild` set
  up), given to maturin and cargo as the target's linker by a wrapper script in
  target/cross/zig/: one linker path for the wheel, the addon and the musl runner of a
  target, so that they share the std cargo builds for it (cargo rebuilds everything,
  std included, when the linker's path changes, and `maturin --zig` and `cargo zigbuild`
  each write their own). zig carries musl's libc and macOS's libSystem stubs, so no SDK
  is needed: the modules need nothing from macOS but libSystem (and libiconv, which std
  links), and resolve Python's and Node's symbols when loaded (`-undefined
  dynamic_lookup`, set by maturin and napi-build). A musl cdylib links the C library
  dynamically (`-C target-feature=-crt-static`).

SHARDROUTE_PLATFORMS=linux-x64-gnu,linux-arm64-gnu (names of the table) builds and checks
only those: `make test-dist`, and so `make test` and CI, builds those two (the platforms
whose packages run here); `make dist` and `make test-dist-full` build them all. The
`shardroute` tarball then lists only the platform packages built beside it (a DIST for
testing: published, it must list all six).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
CROSS_TARGET_DIR = ROOT / "target" / "cross"
NPM_STAGE = ROOT / "target" / "npm"
NODE_PACKAGE = ROOT / "bindings-node"


@dataclass(frozen=True)
class Platform:
    name: str  # napi-rs' platform name: the npm package is shardroute-<name>
    target: str | None  # the Rust target; None: the host's own build
    linker: str  # "host" (the usual builds), "gcc" (Debian's cross gcc) or "zig"
    wheel: str  # the wheel's platform tag as maturin writes it (the glibc version is maturin's audit's)
    os: str  # npm's os, cpu and libc (process.platform, process.arch; glibc or musl, Linux only)
    cpu: str
    libc: str | None
    tested: str  # what `make test-dist` or `make test-dist-full` does with it (README's table says the same)
    macos_min: str | None = None  # MACOSX_DEPLOYMENT_TARGET: the oldest macOS the binaries load on

    @property
    def package(self) -> str:
        return f"shardroute-{self.name}"

    @property
    def node_file(self) -> str:
        return f"shardroute.{self.name}.node"

    @property
    def wheel_pattern(self) -> str:
        """A glob of this platform's wheel in DIST."""
        return f"shardroute-*-cp310-abi3-{self.wheel}.whl"

    @property
    def elf_machine(self) -> str:
        return {"x64": "x86_64", "arm64": "aarch64"}[self.cpu]


PLATFORMS = [
    Platform("linux-x64-gnu", None, "host", "manylinux_*_x86_64", "linux", "x64", "glibc",
             "run: every vector in make test; the installed wheel and addon route a key (scripts/test-dist.sh)"),
    Platform("linux-arm64-gnu", "aarch64-unknown-linux-gnu", "gcc", "manylinux_*_aarch64", "linux", "arm64", "glibc",
             "run under qemu: the installed wheel in Debian's arm64 CPython, the installed addon in Node's arm64 build"),
    Platform("linux-x64-musl", "x86_64-unknown-linux-musl", "zig", "musllinux_1_2_x86_64", "linux", "x64", "musl",
             "built and inspected (make test-dist-full); the core's conformance runner runs as a static musl binary"),
    Platform("linux-arm64-musl", "aarch64-unknown-linux-musl", "zig", "musllinux_1_2_aarch64", "linux", "arm64", "musl",
             "built and inspected (make test-dist-full); the core's conformance runner runs as a static musl binary under qemu"),
    Platform("darwin-x64", "x86_64-apple-darwin", "zig", "macosx_10_12_x86_64", "darwin", "x64", None,
             "built and inspected (make test-dist-full: Mach-O header, architecture, exported symbols); not run",
             macos_min="10.12"),
    Platform("darwin-arm64", "aarch64-apple-darwin", "zig", "macosx_11_0_arm64", "darwin", "arm64", None,
             "built and inspected (make test-dist-full: Mach-O header, architecture, exported symbols); not run",
             macos_min="11.0"),
]


def selected() -> list[Platform]:
    """The platforms of SHARDROUTE_PLATFORMS (default: all)."""
    wanted = [name for name in os.environ.get("SHARDROUTE_PLATFORMS", "").split(",") if name]
    if not wanted:
        return list(PLATFORMS)
    known = {platform.name: platform for platform in PLATFORMS}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        sys.exit(f"platforms: SHARDROUTE_PLATFORMS names {unknown}; the table has {sorted(known)}")
    return [known[name] for name in wanted]


def say(message: str) -> None:
    print(f"[platforms] {message}", flush=True)


def summary(tool: str, label: str, passed: int, failures: list[str]) -> int:
    """The end of a check of scripts/check-artifacts.py or test-dist-emulated.py: each
    failure on stderr, then `<label>: N passed, M failed`; the exit status (1 on a failure)."""
    for failure in failures:
        print(f"{tool}: {failure}", file=sys.stderr)
    print(f"{label}: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


def only_one(directory: Path, pattern: str) -> Path:
    """The one file of `directory` matching `pattern`; exits saying what is there otherwise."""
    matches = sorted(directory.glob(pattern))
    if len(matches) != 1:
        sys.exit(f"platforms: expected one {pattern} in {directory}, found {[m.name for m in matches]}")
    return matches[0]


def run(command: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    say(" ".join(command))
    subprocess.run(command, cwd=cwd, env=env, check=True)


def cross_env(platform: Platform) -> dict[str, str]:
    """The environment of a cross build: Debian's rustc and cargo (first on PATH too, for
    maturin), std built from source into target/cross, the linker of the platform."""
    for tool, package in (("/usr/bin/rustc", "rustc-web"), ("/usr/bin/cargo", "cargo-web")):
        if not Path(tool).exists():
            sys.exit(f"platforms: {tool} is missing: run `make setup` (Debian package {package})")
    env = dict(os.environ)
    env.update({
        "RUSTC": "/usr/bin/rustc",
        "CARGO": "/usr/bin/cargo",
        "RUSTC_BOOTSTRAP": "1",
        "CARGO_TARGET_DIR": str(CROSS_TARGET_DIR),
        "PATH": f"{VENV / 'bin'}:/usr/bin:{os.environ.get('PATH', '')}",
    })
    env.pop("RUSTFLAGS", None)
    assert platform.target is not None
    upper = platform.target.upper().replace("-", "_")
    if platform.linker == "gcc":
        gcc = "aarch64-linux-gnu-gcc"
        if not shutil.which(gcc):
            sys.exit(f"platforms: {gcc} is missing: run `make setup` (Debian package gcc-aarch64-linux-gnu)")
        env[f"CARGO_TARGET_{upper}_LINKER"] = gcc
        env[f"CC_{platform.target.replace('-', '_')}"] = gcc
    if platform.linker == "zig":
        wrapper = zig_wrapper(platform)
        env[f"CARGO_TARGET_{upper}_LINKER"] = str(wrapper)
        env[f"CC_{platform.target.replace('-', '_')}"] = str(wrapper)
        version = subprocess.run(["/usr/bin/rustc", "-V"], check=True, capture_output=True, text=True).stdout.split()[1]
        env["CARGO_ZIGBUILD_RUSTC_VERSION"] = version
    if platform.libc == "musl":
        # A cdylib on musl loads the C library the process has (Python's, Node's).
        env["RUSTFLAGS"] = "-C target-feature=-crt-static"
    if platform.macos_min:
        env["MACOSX_DEPLOYMENT_TARGET"] = platform.macos_min
    return env


def zig_target(platform: Platform) -> str:
    """zig's name of the platform's target (with the oldest macOS it supports)."""
    arch = platform.elf_machine
    if platform.os == "darwin":
        return f"{arch}-macos.{platform.macos_min}-none"
    return f"{arch}-linux-{platform.libc}"


def zig_wrapper(platform: Platform) -> Path:
    """target/cross/zig/cc-<target>: zig as a C compiler and linker for the target, through
    cargo-zigbuild's `zig cc` (which drops or rewrites what zig's linker does not take)."""
    zigbuild = VENV / "bin" / "cargo-zigbuild"
    if not zigbuild.exists():
        sys.exit(f"platforms: {zigbuild} is missing: run `make setup` (scripts/requirements-dist.txt)")
    wrapper = CROSS_TARGET_DIR / "zig" / f"cc-{platform.target}"
    text = (
        "#!/bin/sh\n"
        "# Made by scripts/platforms.py: zig (PyPI's ziglang) as the linker of this target.\n"
        f"export CARGO_ZIGBUILD_ZIG_COMMAND='{VENV / 'bin' / 'python3'}' CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'\n"
        f"exec '{zigbuild}' zig cc -- -g -fno-sanitize=all -target {zig_target(platform)} \"$@\"\n"
    )
    if not wrapper.is_file() or wrapper.read_text() != text:
        wrapper.parent.mkdir(parents=True, exist_ok=True)
        wrapper.write_text(text)
        wrapper.chmod(0o755)
    return wrapper


BUILD_STD = ["-Z", "build-std=std,panic_abort"]


def build_wheel(platform: Platform, dist: Path) -> None:
    assert platform.target is not None
    command = [str(VENV / "bin" / "maturin"), "build", "--release", "--quiet", "--target", platform.target,
               *BUILD_STD, "--out", str(dist)]
    if platform.libc == "musl":
        command += ["--compatibility", "musllinux_1_2"]
    run(command, cwd=ROOT / "bindings-py", env=cross_env(platform))


def build_addon(platform: Platform) -> Path:
    """Builds the Node addon for `platform`; returns the library."""
    if platform.target is None:
        run(["bindings-node/build.sh"])
        return NODE_PACKAGE / "shardroute.node"
    run(["/usr/bin/cargo", "build", "--release", "--quiet", "-p", "shardroute-node", "--target", platform.target,
         *BUILD_STD], env=cross_env(platform))
    suffix = "dylib" if platform.os == "darwin" else "so"
    return CROSS_TARGET_DIR / platform.target / "release" / f"libshardroute_node.{suffix}"


def node_manifest() -> dict:
    return json.loads((NODE_PACKAGE / "package.json").read_text(encoding="utf-8"))


def pack(stage: Path, dist: Path) -> None:
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(dist)], cwd=stage, check=True,
                   stdout=subprocess.DEVNULL)


def stage_platform_package(platform: Platform, library: Path, dist: Path) -> None:
    """target/npm/shardroute-<platform>/: the addon as <name>.node, its package.json, licenses; packed into DIST."""
    main = node_manifest()
    stage = NPM_STAGE / platform.package
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    shutil.copyfile(library, stage / platform.node_file)
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        shutil.copyfile(NODE_PACKAGE / name, stage / name)
    libc = f", {platform.libc}" if platform.libc else ""
    manifest = {
        "name": platform.package,
        "version": main["version"],
        "description": f"The native addon of shardroute for {platform.os} {platform.cpu}{libc}: "
                       "installed by `npm install shardroute` where it fits (an optional dependency).",
        "license": main["license"],
        "repository": main["repository"],
        "main": platform.node_file,
        "files": [platform.node_file, "LICENSE-MIT", "LICENSE-APACHE", "README.md"],
        "os": [platform.os],
        "cpu": [platform.cpu],
        **({"libc": [platform.libc]} if platform.libc else {}),
        "engines": main["engines"],
    }
    (stage / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (stage / "README.md").write_text(
        f"# {platform.package}\n\nThe shardroute Node.js addon built for {platform.os} {platform.cpu}{libc}. "
        "Install `shardroute`, which depends on this package where it fits and loads it.\n", encoding="utf-8")
    pack(stage, dist)


def stage_main_package(dist: Path) -> None:
    """target/npm/shardroute/: bindings-node's files (package.json `files`), with the
    platform package of every platform built (`selected()`: the whole table unless
    SHARDROUTE_PLATFORMS names fewer) as an optional dependency at the same version (what
    napi-rs' `prepublish` adds); packed into DIST. The tarball carries no binary. Listing
    only what DIST holds keeps npm off the registry: a listed package npm cannot find in
    DIST it would look up there."""
    main = node_manifest()
    stage = NPM_STAGE / "shardroute"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    for name in main["files"]:
        source = NODE_PACKAGE / name
        if not source.is_file():
            sys.exit(f"platforms: bindings-node/{name} (package.json `files`) is missing: run bindings-node/build.sh")
        shutil.copyfile(source, stage / name)
    if any(name.endswith(".node") for name in main["files"]):
        sys.exit("platforms: bindings-node/package.json `files` lists a .node: the addon ships in the platform packages")
    main["optionalDependencies"] = {platform.package: main["version"] for platform in selected()}
    (stage / "package.json").write_text(json.dumps(main, indent=2) + "\n", encoding="utf-8")
    pack(stage, dist)


def dist(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for platform in selected():
        say(f"{platform.name} ({platform.target or 'this machine'})")
        if platform.target is not None:
            build_wheel(platform, out)
        stage_platform_package(platform, build_addon(platform), out)
    stage_main_package(out)


def npm_project(directory: Path, out: Path, cpu: str | None, libc: str | None) -> None:
    """A scratch npm project in `directory` that depends on DIST's shardroute, every
    platform package overridden by DIST's tarball (none is published yet: npm reads
    them from DIST, and the registry is never asked, since `shardroute` lists only the
    packages DIST holds), installed as npm would on `cpu` and `libc` (default: this
    machine's): npm itself picks the platform package."""
    version = node_manifest()["version"]
    main = out / f"shardroute-{version}.tgz"
    overrides = {}
    for platform in PLATFORMS:
        tarball = out / f"{platform.package}-{version}.tgz"
        if tarball.is_file():
            overrides[platform.package] = f"file:{tarball}"
    if not main.is_file():
        sys.exit(f"platforms: {main} is missing: run `make dist`")
    directory.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "shardroute-dist-test", "private": True, "version": "0.0.0",
                "dependencies": {"shardroute": f"file:{main}"}, "overrides": overrides}
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    command = ["npm", "install", "--silent", "--no-audit", "--no-fund"]
    if cpu:
        command.append(f"--cpu={cpu}")
    if libc:
        command.append(f"--libc={libc}")
    subprocess.run(command, cwd=directory, check=True)


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["dist"] and len(args) == 2:
        dist(Path(args[1]).resolve())
        return 0
    if args[:1] == ["npm-project"] and len(args) >= 3:
        options = dict(zip(args[3::2], args[4::2]))
        if set(options) - {"--cpu", "--libc"} or len(args[3:]) % 2:
            sys.exit("usage: platforms.py npm-project DIR DIST [--cpu CPU] [--libc LIBC]")
        npm_project(Path(args[1]).resolve(), Path(args[2]).resolve(), options.get("--cpu"), options.get("--libc"))
        return 0
    if args == ["table"]:
        for platform in PLATFORMS:
            print(f"{platform.name}\t{platform.target or '(host)'}\t{platform.wheel}\t{platform.package}\t{platform.tested}")
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
