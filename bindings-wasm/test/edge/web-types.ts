// What `shardroute-wasm/web` declares, as code written against it uses it: type-checked
// by `tsc --noEmit -p tsconfig.web.json` (test.sh), never run.
import { Router, ShardrouteError, init, initSync, type InitInput } from 'shardroute-wasm/web';

export async function load(wasm: URL, module: WebAssembly.Module, bytes: Uint8Array, response: Response): Promise<string> {
  await init();
  await init(wasm);
  await init(wasm.href);
  await init(response);
  await init(fetch(wasm));
  await init(bytes);
  await init(module);
  initSync(module);
  initSync(bytes.buffer as ArrayBuffer);
  const inputs: InitInput[] = [wasm, module, bytes];
  const router = new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });
  try {
    return `${inputs.length} ${router.node('user:42')}`;
  } catch (err) {
    return err instanceof ShardrouteError ? err.code : 'unknown';
  }
}
