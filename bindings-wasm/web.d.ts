// Type declarations of `shardroute-wasm/web`: the API of index.d.ts (one declaration of
// it for every entry) and the two calls only the WebAssembly package has, which load the
// module where the runtime cannot do it on import (browsers, service and web workers).

export * from './index.js';

/**
 * Where `init` can load the module from: a URL or URL string (fetched), a `Response` or a
 * promise of one, the bytes of the `.wasm`, or a compiled `WebAssembly.Module`.
 */
export type InitInput = URL | string | Response | PromiseLike<Response> | BufferSource | WebAssembly.Module;

/**
 * Loads and instantiates the WebAssembly module, once: call it (and await it) before the
 * first `Router` (in a browser or a worker, every call before it throws a `ShardrouteError`
 * `not_initialized` that says so). Omitted, `input` is the `.wasm` beside the package's glue, which webpack
 * and Vite emit with the bundle; with esbuild, import `shardroute-wasm/shardroute_wasm.wasm`
 * through its `file` loader and pass the URL. Resolves at once when the module is already
 * loaded (always in Node, Deno and workerd, whose entries load it on import).
 */
export declare function init(input?: InitInput): Promise<void>;

/**
 * Instantiates the module synchronously from a compiled `WebAssembly.Module` (workerd,
 * Vercel and Netlify edge functions give one for a `.wasm` import) or from its bytes. A
 * no-op when the module is already loaded.
 */
export declare function initSync(module: WebAssembly.Module | BufferSource): void;
