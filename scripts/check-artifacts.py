#!/usr/bin/env python3
"""Fails unless every binary artifact of `make dist` is what its name and metadata say.

For each wheel (the module's and the command line's): the platform tag of its file name
and of its WHEEL file against the binary inside: its format (ELF or Mach-O), its machine,
its C library (the libraries it needs: glibc's, musl's, macOS's libSystem), the newest
glibc symbol version it needs (for manylinux_X_Y: at most X.Y), the oldest macOS it loads
on (for macosx_X_Y: at most X.Y), and the symbol Python calls (`PyInit__native`). Linux
glibc wheels are also judged by `auditwheel show`, which must find the same tag. For each
npm package of the addon: its `os`, `cpu` and `libc` against the binary in the same way,
and the symbol Node calls (`napi_register_module_v1`); for `shardroute` itself: no
binary, and as optional dependencies at its version the platform packages of DIST, every
platform checked among them (all six of scripts/platforms.py's table in `make
test-dist-full`). `file` must name the same format and machine.

Symbols Python and Node provide are resolved when the module is loaded: on macOS the
check is that each such symbol is bound by dynamic lookup (no library named), as
`-undefined dynamic_lookup` makes it.

    scripts/check-artifacts.py [DIST]        (default dist/; SHARDROUTE_PLATFORMS as scripts/platforms.py)

auditwheel cannot judge the musllinux wheels here: zig links them against musl's `libc.so`
(as musl's own toolchain does), a name musl's loader takes as itself, where auditwheel
knows only the name Alpine gives musl (`libc.musl-<arch>.so.1`), and on this glibc machine
it looks the name up among glibc's files. Their check is the reader's: ELF, machine, a
needed list of musl's libc alone, no glibc symbol version.
"""

from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import platforms  # noqa: E402  (scripts/platforms.py: the table)

ROOT = Path(__file__).resolve().parent.parent
AUDITWHEEL = ROOT / ".venv" / "bin" / "auditwheel"


class Mismatch(Exception):
    """An artifact is not what its name or metadata say."""


# ---------------------------------------------------------------------------------------
# Binary readers: only what the checks need, from the formats' headers.


@dataclass
class Binary:
    format: str  # "ELF" or "Mach-O"
    machine: str  # "x86_64" or "aarch64"
    kind: str  # "shared library", "executable", "bundle"
    needed: list[str]  # ELF DT_NEEDED, Mach-O LC_LOAD_DYLIB
    exported: set[str]  # defined global symbols (Mach-O names without the leading underscore)
    glibc: tuple[int, int] | None = None  # newest GLIBC_x.y version needed
    macos_min: tuple[int, int] | None = None  # LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX
    not_dynamic_lookup: set[str] = field(default_factory=set)  # Mach-O undefined symbols bound to a library, not looked up flat


ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "aarch64"}


def read_binary(data: bytes) -> Binary:
    if data[:4] == b"\x7fELF":
        return read_elf(data)
    if data[:4] == struct.pack("<I", 0xFEEDFACF):
        return read_macho(data)
    raise Mismatch(f"neither ELF nor 64-bit Mach-O (magic {data[:4].hex()})")


def cstring(data: bytes, offset: int) -> str:
    return data[offset:data.index(b"\0", offset)].decode("utf-8", "replace")


def read_elf(data: bytes) -> Binary:
    if data[4] != 2 or data[5] != 1:
        raise Mismatch("not a 64-bit little-endian ELF file")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 32)
    e_phentsize, e_phnum, e_shentsize, e_shnum = struct.unpack_from("<HHHH", data, 54)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    interpreter = None
    for i in range(e_phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == 3:  # PT_INTERP
            interpreter = data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode()
    needed: list[str] = []
    exported: set[str] = set()
    newest: tuple[int, int] | None = None
    for _, sh_type, _, _, offset, size, link, info, _, entsize in sections:
        strtab = sections[link][4] if link < len(sections) else 0
        if sh_type == 6:  # SHT_DYNAMIC
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(cstring(data, strtab + value))
        elif sh_type == 11:  # SHT_DYNSYM
            for at in range(offset, offset + size, entsize or 24):
                st_name, st_info, _, st_shndx = struct.unpack_from("<IBBH", data, at)
                if st_info >> 4 in (1, 2) and st_shndx != 0 and st_name:
                    exported.add(cstring(data, strtab + st_name))
        elif sh_type == 0x6FFFFFFE:  # SHT_GNU_verneed: the symbol versions needed, per library
            at = offset
            for _ in range(info):
                _, vn_cnt, _, vn_aux, vn_next = struct.unpack_from("<HHIII", data, at)
                aux = at + vn_aux
                for _ in range(vn_cnt):
                    _, _, _, vna_name, vna_next = struct.unpack_from("<IHHII", data, aux)
                    found = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", cstring(data, strtab + vna_name))
                    if found:
                        version = (int(found.group(1)), int(found.group(2)))
                        newest = max(newest or version, version)
                    aux += vna_next
                at += vn_next
    kind = {2: "executable", 3: "shared library"}.get(e_type, f"type {e_type}")
    if kind == "shared library" and interpreter:
        kind = "executable"  # a position-independent executable
    machine = ELF_MACHINES.get(e_machine, f"machine {e_machine}")
    return Binary("ELF", machine, kind, needed, exported, glibc=newest)


def uleb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


FLAT_LOOKUP = -2  # BIND_SPECIAL_DYLIB_FLAT_LOOKUP: found in whatever image the process has loaded


def dyld_binds(data: bytes, start: int, size: int) -> dict[str, set[int]]:
    """The library ordinal each symbol is bound with, from dyld's bind opcodes (LC_DYLD_INFO)."""
    binds: dict[str, set[int]] = {}
    at, end, ordinal, name = start, start + size, 0, ""
    while at < end:
        opcode, immediate = data[at] & 0xF0, data[at] & 0x0F
        at += 1
        if opcode == 0x10:  # SET_DYLIB_ORDINAL_IMM
            ordinal = immediate
        elif opcode == 0x20:  # SET_DYLIB_ORDINAL_ULEB
            ordinal, at = uleb(data, at)
        elif opcode == 0x30:  # SET_DYLIB_SPECIAL_IMM: 0, -1 (the executable), -2 (flat lookup), -3
            ordinal = immediate - 16 if immediate else 0
        elif opcode == 0x40:  # SET_SYMBOL_TRAILING_FLAGS_IMM, then the name
            name = cstring(data, at).removeprefix("_")
            at = data.index(b"\0", at) + 1
        elif opcode in (0x60, 0x70, 0x80, 0xA0):  # SET_ADDEND_SLEB, SET_SEGMENT_AND_OFFSET_ULEB, ADD_ADDR_ULEB, DO_BIND_ADD_ADDR_ULEB
            _, at = uleb(data, at)
        elif opcode == 0xC0:  # DO_BIND_ULEB_TIMES_SKIPPING_ULEB
            _, at = uleb(data, at)
            _, at = uleb(data, at)
        elif opcode == 0xD0 and immediate == 0:  # THREADED, SET_BIND_ORDINAL_TABLE_SIZE_ULEB
            _, at = uleb(data, at)
        if opcode in (0x90, 0xA0, 0xB0, 0xC0):  # a DO_BIND
            binds.setdefault(name, set()).add(ordinal)
    return binds


def chained_imports(data: bytes, start: int) -> dict[str, set[int]]:
    """The library ordinal of each import of LC_DYLD_CHAINED_FIXUPS (formats 1 to 3)."""
    _, _, imports_offset, symbols_offset, count, imports_format, _ = struct.unpack_from("<IIIIIII", data, start)
    size = {1: 4, 2: 8, 3: 16}[imports_format]
    binds: dict[str, set[int]] = {}
    for i in range(count):
        (word,) = struct.unpack_from("<I", data, start + imports_offset + i * size)
        ordinal, name_offset = word & 0xFF, word >> 9
        if imports_format == 3:
            name_offset = struct.unpack_from("<I", data, start + imports_offset + i * size + 12)[0]
        signed = ordinal - 256 if ordinal >= 0xF0 else ordinal
        name = cstring(data, start + symbols_offset + name_offset).removeprefix("_")
        binds.setdefault(name, set()).add(signed)
    return binds


def read_macho(data: bytes) -> Binary:
    cputype, _, filetype, ncmds, _, _ = struct.unpack_from("<iiIIII", data, 4)
    at = 32
    needed: list[str] = []
    exported: set[str] = set()
    undefined: set[str] = set()
    binds: dict[str, set[int]] = {}
    minimum = None
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", data, at)
        if cmd == 0x2:  # LC_SYMTAB
            symoff, nsyms, stroff, _ = struct.unpack_from("<IIII", data, at + 8)
            for i in range(nsyms):
                n_strx, n_type, _, _, _ = struct.unpack_from("<IBBHQ", data, symoff + 16 * i)
                name = cstring(data, stroff + n_strx).removeprefix("_")
                if n_type & 0xE0:  # a debugging entry
                    continue
                if n_type & 0x01 and n_type & 0x0E == 0x0E:  # N_EXT, N_SECT: defined here, global
                    exported.add(name)
                elif n_type & 0x01 and n_type & 0x0E == 0:  # N_EXT, N_UNDF
                    undefined.add(name)
        elif cmd in (0x22, 0x80000022):  # LC_DYLD_INFO(_ONLY): bind, weak bind, lazy bind opcodes
            bind_off, bind_size, weak_off, weak_size, lazy_off, lazy_size = struct.unpack_from("<IIIIII", data, at + 16)
            for offset, size in ((bind_off, bind_size), (weak_off, weak_size), (lazy_off, lazy_size)):
                for name, ordinals in dyld_binds(data, offset, size).items():
                    binds.setdefault(name, set()).update(ordinals)
        elif cmd == 0x80000034:  # LC_DYLD_CHAINED_FIXUPS
            (offset,) = struct.unpack_from("<I", data, at + 8)
            for name, ordinals in chained_imports(data, offset).items():
                binds.setdefault(name, set()).update(ordinals)
        elif cmd == 0x32:  # LC_BUILD_VERSION
            _, minos = struct.unpack_from("<II", data, at + 8)
            minimum = (minos >> 16, (minos >> 8) & 0xFF)
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX
            (version,) = struct.unpack_from("<I", data, at + 8)
            minimum = (version >> 16, (version >> 8) & 0xFF)
        elif cmd in (0xC, 0x18, 0x1F, 0x80000018, 0x8000001F):  # LC_LOAD_DYLIB and its weak/reexport kinds
            (offset,) = struct.unpack_from("<I", data, at + 8)
            needed.append(cstring(data, at + offset))
        at += cmdsize
    kind = {6: "shared library", 8: "bundle", 2: "executable"}.get(filetype, f"type {filetype}")
    machine = MACHO_CPUS.get(cputype, f"cpu {cputype:#x}")
    bound = {name for name in undefined if binds.get(name, {FLAT_LOOKUP}) != {FLAT_LOOKUP}}
    return Binary("Mach-O", machine, kind, needed, exported, macos_min=minimum, not_dynamic_lookup=bound)


def file_says(data: bytes) -> str:
    """What `file` says of the binary."""
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        return subprocess.run(["file", "-b", handle.name], check=True, capture_output=True, text=True).stdout.strip()


FILE_WORDS = {("ELF", "x86_64"): ["ELF 64-bit", "x86-64"], ("ELF", "aarch64"): ["ELF 64-bit", "ARM aarch64"],
              ("Mach-O", "x86_64"): ["Mach-O 64-bit", "x86_64"], ("Mach-O", "aarch64"): ["Mach-O 64-bit", "arm64"]}

GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                   "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
MACOS_LIBRARIES = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib", "/usr/lib/libcharset.1.dylib"}


def musl_libraries(machine: str) -> set[str]:
    return {"libc.so", f"libc.musl-{machine}.so.1"}


# ---------------------------------------------------------------------------------------
# The expectations of a tag, and the check of a binary against them.


@dataclass
class Expected:
    format: str
    machine: str
    libc: str  # "glibc", "musl" or "macos"
    glibc_max: tuple[int, int] | None = None
    macos_max: tuple[int, int] | None = None


def expected_of_wheel_tag(tag: str) -> Expected:
    if found := re.fullmatch(r"manylinux_(\d+)_(\d+)_(x86_64|aarch64)", tag):
        return Expected("ELF", found.group(3), "glibc", glibc_max=(int(found.group(1)), int(found.group(2))))
    if found := re.fullmatch(r"musllinux_(\d+)_(\d+)_(x86_64|aarch64)", tag):
        return Expected("ELF", found.group(3), "musl")
    if found := re.fullmatch(r"macosx_(\d+)_(\d+)_(x86_64|arm64)", tag):
        machine = "aarch64" if found.group(3) == "arm64" else "x86_64"
        return Expected("Mach-O", machine, "macos", macos_max=(int(found.group(1)), int(found.group(2))))
    raise Mismatch(f"platform tag {tag} is none this project builds")


def expected_of_platform(platform) -> Expected:
    machine = platform.elf_machine
    if platform.os == "darwin":
        major, minor = (int(part) for part in platform.macos_min.split("."))
        return Expected("Mach-O", machine, "macos", macos_max=(major, minor))
    return Expected("ELF", machine, platform.libc)


def check_binary(data: bytes, expected: Expected, symbol: str, kinds: tuple[str, ...]) -> str:
    """Raises Mismatch unless the binary is what `expected` says; returns a one-line description."""
    binary = read_binary(data)
    problems = []
    if (binary.format, binary.machine) != (expected.format, expected.machine):
        problems.append(f"is {binary.format} {binary.machine}, the name says {expected.format} {expected.machine}")
    if binary.kind not in kinds:
        problems.append(f"is a {binary.kind}, not a {' or '.join(kinds)}")
    if symbol and symbol not in binary.exported:
        problems.append(f"does not export {symbol}")
    needed = set(binary.needed)
    if expected.libc == "glibc":
        if "libc.so.6" not in needed and binary.kind != "executable":
            problems.append(f"needs {sorted(needed)}, not glibc's libc.so.6")
        if extra := needed - GLIBC_LIBRARIES:
            problems.append(f"needs libraries outside glibc's: {sorted(extra)}")
        if expected.glibc_max and binary.glibc and binary.glibc > expected.glibc_max:
            problems.append(f"needs GLIBC_{binary.glibc[0]}.{binary.glibc[1]}, newer than the tag's glibc "
                            f"{expected.glibc_max[0]}.{expected.glibc_max[1]}")
    elif expected.libc == "musl":
        if not needed or needed - musl_libraries(expected.machine):
            problems.append(f"needs {sorted(needed)}, not musl's libc alone")
        if binary.glibc:
            problems.append(f"needs glibc's symbol version GLIBC_{binary.glibc[0]}.{binary.glibc[1]}")
    else:
        if extra := needed - MACOS_LIBRARIES:
            problems.append(f"loads libraries outside macOS's /usr/lib: {sorted(extra)}")
        if binary.macos_min is None:
            problems.append("names no minimum macOS (LC_BUILD_VERSION)")
        elif expected.macos_max and binary.macos_min > expected.macos_max:
            problems.append(f"needs macOS {binary.macos_min[0]}.{binary.macos_min[1]}, newer than the tag's "
                            f"{expected.macos_max[0]}.{expected.macos_max[1]}")
        host = [name for name in binary.not_dynamic_lookup if name.startswith(("Py", "_Py", "napi_", "node_api_"))]
        if host:
            problems.append(f"binds symbols of the host process to a library, not by dynamic lookup: {sorted(host)[:5]}")
    says = file_says(data)
    if not all(word in says for word in FILE_WORDS.get((expected.format, expected.machine), ["?"])):
        problems.append(f"`file` says: {says}")
    if problems:
        raise Mismatch("; ".join(problems))
    if binary.format == "ELF":
        libc = (f"glibc {binary.glibc[0]}.{binary.glibc[1]}+" if binary.glibc else
                "musl" if needed and needed <= musl_libraries(binary.machine) else "static")
        return f"ELF {binary.machine} {binary.kind}, {libc}, needs {', '.join(binary.needed) or 'nothing'}"
    low = f"{binary.macos_min[0]}.{binary.macos_min[1]}" if binary.macos_min else "?"
    return f"Mach-O {binary.machine} {binary.kind}, macOS {low}+, exports {symbol}"


# ---------------------------------------------------------------------------------------
# The artifacts.


def auditwheel_tag(wheel: Path) -> str:
    shown = subprocess.run([str(AUDITWHEEL), "show", "--json", str(wheel)], capture_output=True, text=True)
    if shown.returncode != 0:
        raise Mismatch(f"auditwheel show failed: {shown.stderr.strip().splitlines()[-1:]}")
    return json.loads(shown.stdout)["overall_tag"]


def check_wheel(wheel: Path) -> str:
    name, version, python, abi, platform_tag = wheel.name.removesuffix(".whl").split("-")
    expected = expected_of_wheel_tag(platform_tag)
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    wheel_file = next(n for n in names if n.endswith(".dist-info/WHEEL"))
    tags = {line.split(":", 1)[1].strip() for line in archive.read(wheel_file).decode().splitlines()
            if line.startswith("Tag:")}
    if tags != {f"{python}-{abi}-{platform_tag}"}:
        raise Mismatch(f"WHEEL says {sorted(tags)}, the file name {python}-{abi}-{platform_tag}")
    if name == "shardroute":
        binaries = [n for n in names if n.endswith((".so", ".dylib", ".pyd"))]
        if binaries != ["shardroute/_native.abi3.so"]:
            raise Mismatch(f"holds {binaries}, not the one module shardroute/_native.abi3.so")
        described = check_binary(archive.read(binaries[0]), expected, "PyInit__native", ("shared library", "bundle"))
    else:
        scripts = [n for n in names if n.endswith(".data/scripts/shardroute")]
        if len(scripts) != 1:
            raise Mismatch(f"holds no command {names}")
        described = check_binary(archive.read(scripts[0]), expected, "", ("executable",))
    if expected.libc == "glibc":
        verdict = auditwheel_tag(wheel)
        if verdict != platform_tag:
            raise Mismatch(f"auditwheel show finds {verdict}, the name says {platform_tag}")
        described += f"; auditwheel: {verdict}"
    return described


def npm_files(tarball: Path) -> dict[str, bytes]:
    with tarfile.open(tarball) as archive:
        return {member.name.removeprefix("package/"): archive.extractfile(member).read()
                for member in archive.getmembers() if member.isfile()}


def check_platform_package(platform, tarball: Path, version: str) -> str:
    files = npm_files(tarball)
    manifest = json.loads(files["package.json"])
    wanted = {"name": platform.package, "version": version, "os": [platform.os], "cpu": [platform.cpu],
              "main": platform.node_file}
    if platform.libc:
        wanted["libc"] = [platform.libc]
    wrong = {key: manifest.get(key) for key, value in wanted.items() if manifest.get(key) != value}
    if wrong or ("libc" in manifest and not platform.libc):
        raise Mismatch(f"package.json has {wrong or {'libc': manifest.get('libc')}}, the table says {wanted}")
    binaries = [name for name in files if name.endswith(".node")]
    if binaries != [platform.node_file]:
        raise Mismatch(f"holds {binaries}, not {platform.node_file}")
    for license_name in ("LICENSE-MIT", "LICENSE-APACHE"):
        if license_name not in files:
            raise Mismatch(f"lacks {license_name}")
    return check_binary(files[platform.node_file], expected_of_platform(platform), "napi_register_module_v1",
                        ("shared library", "bundle"))


def check_main_package(tarball: Path, version: str, dist: Path) -> str:
    files = npm_files(tarball)
    binaries = [name for name in files if name.endswith(".node")]
    if binaries:
        raise Mismatch(f"carries {binaries}: the addon belongs in the platform packages")
    manifest = json.loads(files["package.json"])
    # What DIST holds of the table, which npm reads from DIST: a package listed but not
    # there, npm would look up in the registry.
    wanted = {p.package: version for p in platforms.PLATFORMS if (dist / f"{p.package}-{version}.tgz").is_file()}
    if manifest.get("optionalDependencies") != wanted:
        raise Mismatch(f"optionalDependencies are {manifest.get('optionalDependencies')}, "
                       f"the platform packages in DIST {wanted}")
    if "os" in manifest or "cpu" in manifest:
        raise Mismatch("names an os or cpu: the package itself is JavaScript, for every platform")
    missing = [p.package for p in platforms.selected() if p.package not in wanted]
    if missing:
        raise Mismatch(f"DIST lacks the platform packages {missing}")
    return f"JavaScript only; optionalDependencies: {len(wanted)} platform packages at {version}"


def only(dist: Path, pattern: str) -> Path:
    matches = sorted(dist.glob(pattern))
    if len(matches) != 1:
        raise Mismatch(f"expected one {pattern} in {dist}, found {[m.name for m in matches]}")
    return matches[0]


def main() -> int:
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist").resolve()
    version = json.loads((ROOT / "bindings-node" / "package.json").read_text())["version"]
    checks = []  # (artifact, thunk)
    for platform in platforms.selected():
        checks.append((platform.wheel_pattern, lambda p=platform: check_wheel(only(dist, p.wheel_pattern))))
        tarball = f"{platform.package}-{version}.tgz"
        checks.append((tarball, lambda p=platform, t=tarball: check_platform_package(p, dist / t, version)))
    checks.append(("shardroute_cli-*.whl", lambda: check_wheel(only(dist, "shardroute_cli-*.whl"))))
    checks.append((f"shardroute-{version}.tgz", lambda: check_main_package(dist / f"shardroute-{version}.tgz", version, dist)))
    wheels = {path.name for path in dist.glob("*.whl")}
    claimed = {path.name for p in platforms.PLATFORMS for path in dist.glob(p.wheel_pattern)}
    claimed |= {path.name for path in dist.glob("shardroute_cli-*.whl")}
    failures = [f"{name}: a wheel of no platform in scripts/platforms.py" for name in sorted(wheels - claimed)]
    passed = 0
    for artifact, check in checks:
        try:
            described = check()
        except (Mismatch, FileNotFoundError, KeyError, StopIteration) as err:
            failures.append(f"{artifact}: {err}")
            print(f"  FAIL {artifact}: {err}")
            continue
        passed += 1
        name = artifact if "*" not in artifact else only(dist, artifact).name
        print(f"  ok   {name}\n         {described}")
    return platforms.summary("check-artifacts", "check-artifacts", passed, failures)


if __name__ == "__main__":
    sys.exit(main())
