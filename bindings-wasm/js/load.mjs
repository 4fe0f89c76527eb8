// What the two web entries (js/index.mjs, the package's; js/route/index.mjs, the route
// build's) share of loading their module: `init`'s one instantiation, and its error when
// the .wasm cannot be had. No top-level `await` (service workers refuse one).

/**
 * Instantiates a build's module through its glue's `init` (`glueInit`), once: `input` is
 * where the module comes from, as for the entries' `init`. A failure says what was asked
 * and how a bundler that leaves the .wasm behind gets it: import `wasmExport` (the
 * package's export of the .wasm) and pass it.
 */
export async function instantiate(glueInit, input, wasmExport) {
  try {
    await glueInit({ module_or_path: input });
  } catch (err) {
    throw new Error(`shardroute-wasm: cannot load the WebAssembly module from ${describe(input)}: ${err?.message ?? err}. `
      + 'A bundler that leaves the .wasm behind (esbuild) needs it imported and passed: '
      + `\`import wasm from '${wasmExport}'\` (esbuild: --loader:.wasm=file), then \`init(wasm)\``, { cause: err });
  }
}

function describe(input) {
  if (input === undefined) return 'the .wasm beside the glue';
  if (input instanceof URL || typeof input === 'string') return String(input);
  if (typeof Response === 'function' && input instanceof Response) return `a Response of ${input.url || 'unknown origin'}`;
  return Object.prototype.toString.call(input);
}
