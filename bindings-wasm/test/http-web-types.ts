// `shardroute-wasm/http` where the DOM's types are (browsers, service workers, workerd's
// types are the same shapes): the global `fetch`, and a worker's own, fit the `fetch`
// option. Type-checked by `tsc --noEmit -p tsconfig.web.json` (test.sh), never run.
import { HttpFollower } from 'shardroute-wasm/http';

export async function followFromAWorker(service: { fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> }): Promise<void> {
  const follower = await HttpFollower.start('https://cdn.example.com/topology.json', { fetch });
  await HttpFollower.start('/topology.json', { fetch: globalThis.fetch });
  await HttpFollower.start('https://config/topology.json', { fetch: service.fetch.bind(service) });
  await HttpFollower.start('/topology.json', { fetch: (url, init) => fetch(url, init) });
  follower.close();
}
