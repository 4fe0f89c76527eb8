// A module service worker answering POST ./route {topology, keys} with each key's shard
// and node: navigator.serviceWorker.register('./service-worker.mjs', { type: 'module' })
import { init, Router } from './node_modules/shardroute-wasm/js/index.mjs';

// No top-level await in a service worker: start loading now, wait in the handlers, and
// add every listener in this first evaluation.
const ready = init();
self.addEventListener('install', (event) => event.waitUntil(ready.then(() => self.skipWaiting())));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).pathname.endsWith('/route')) event.respondWith(route(event.request));
});

async function route(request) {
  const [{ topology, keys }] = await Promise.all([request.json(), ready]);
  const router = new Router(topology);
  return Response.json({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) });
}
