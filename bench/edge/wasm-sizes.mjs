// What a .wasm is made of, read from the file itself: the size of each section, and of
// each function's code under its (demangled) name, from the `name` section rustc writes
// (the shipped .wasm has none: build.sh's wasm-opt and wasm-bindgen drop it, so names come
// from rustc's own output, before either). Used by bench/edge/bench.mjs.

const SECTIONS = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element',
  'code', 'data', 'data count', 'tag'];

/** An unsigned LEB128 at `at`: `[value, next offset]`. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

/** `[{ id, name, start, size }]`: every section, custom ones named by their own name. */
export function sections(bytes) {
  const list = [];
  for (let at = 8; at < bytes.length;) {
    const id = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    let name = SECTIONS[id] ?? `section ${id}`;
    if (id === 0) {
      const [length, from] = leb(bytes, start);
      name = `custom: ${new TextDecoder().decode(bytes.subarray(from, from + length))}`;
    }
    list.push({ id, name, start, size });
    at = start + size;
  }
  return list;
}

/** The number of imported functions (they come first in the function index space). */
function importedFunctions(bytes, section) {
  let [count, at] = leb(bytes, section.start);
  let functions = 0;
  for (; count > 0; count--) {
    for (let field = 0; field < 2; field++) {
      const [length, next] = leb(bytes, at);
      at = next + length;
    }
    const kind = bytes[at++];
    if (kind === 0) {
      functions++;
      [, at] = leb(bytes, at);
    } else if (kind === 1) {
      at += 1;
      const [flags, next] = leb(bytes, at);
      [, at] = leb(bytes, next);
      if (flags & 1) [, at] = leb(bytes, at);
    } else if (kind === 2) {
      const [flags, next] = leb(bytes, at);
      [, at] = leb(bytes, next);
      if (flags & 1) [, at] = leb(bytes, at);
    } else if (kind === 3) {
      at += 2;
    } else {
      [, at] = leb(bytes, at + 1);
    }
  }
  return functions;
}

/** The function names of the `name` section, by function index. */
function functionNames(bytes, section) {
  const names = new Map();
  let [, at] = leb(bytes, section.start);
  at += 4; // "name"
  const end = section.start + section.size;
  while (at < end) {
    const kind = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    if (kind === 1) {
      let [count, p] = leb(bytes, start);
      for (; count > 0; count--) {
        const [index, q] = leb(bytes, p);
        const [length, r] = leb(bytes, q);
        names.set(index, new TextDecoder().decode(bytes.subarray(r, r + length)));
        p = r + length;
      }
    }
    at = start + size;
  }
  return names;
}

/** `[{ name, size }]`: each function body's size in the code section, with its name. */
export function functionSizes(bytes) {
  const list = sections(bytes);
  const imports = list.find((s) => s.name === 'import');
  const code = list.find((s) => s.name === 'code');
  const nameSection = list.find((s) => s.name === 'custom: name');
  if (!code || !nameSection) throw new Error('no code or name section');
  const names = functionNames(bytes, nameSection);
  const first = imports ? importedFunctions(bytes, imports) : 0;
  let [count, at] = leb(bytes, code.start);
  const sizes = [];
  for (let i = 0; i < count; i++) {
    const [size, body] = leb(bytes, at);
    sizes.push({ name: names.get(first + i) ?? `function ${first + i}`, size: body + size - at });
    at = body + size;
  }
  return sizes;
}

/**
 * The identifiers of a Rust symbol in v0 mangling (`_R…`), in order: crate, modules,
 * types, function (`shardroute`, `topology`, `Topology`, `from_value`). Crate hashes,
 * back references and disambiguators are dropped; generic arguments come after the
 * function's own path. Anything else (wasm-bindgen's exports: `router_route_…`) is one
 * identifier.
 */
export function identifiers(symbol) {
  if (!symbol.startsWith('_R')) return [symbol.replace(/_[0-9a-f]{16}$/, '')];
  const text = symbol.slice(2).replace(/Cs[0-9A-Za-z]*_/g, '').replace(/B[0-9A-Za-z]*_/g, '')
    .replace(/([MXY])s[0-9A-Za-z]*_/g, '$1');
  const names = [];
  for (let at = 0; at < text.length;) {
    const digits = /^\d+/.exec(text.slice(at));
    if (!digits) {
      at++;
      continue;
    }
    at += digits[0].length;
    if (text[at] === '_') at++;
    const length = Number(digits[0]);
    names.push(text.slice(at, at + length));
    at += length;
  }
  return names.length ? names : [symbol];
}

/**
 * Where a function's code comes from: the crate, and for this project's crates the
 * module below it (`shardroute::ops`, `shardroute::strategy`), for std's `core`/`alloc`/
 * `std` just the crate.
 */
export function origin(symbol) {
  const names = identifiers(symbol);
  if (!symbol.startsWith('_R')) return 'wasm-bindgen exports (shardroute_wasm)';
  const [crate, module, submodule] = names;
  if (crate === 'shardroute' && module === 'strategy' && submodule) return `shardroute::strategy::${submodule}`;
  if (crate === 'shardroute' || crate === 'shardroute_wasm') return module ? `${crate}::${module}` : crate;
  return crate;
}

/** `[[group, bytes]]` of the functions grouped by `key(name)`, largest first. */
export function grouped(sizes, key) {
  const groups = new Map();
  for (const { name, size } of sizes) groups.set(key(name), (groups.get(key(name)) ?? 0) + size);
  return [...groups].sort((a, b) => b[1] - a[1]);
}
