// `make playground`: serves the repository read-only on 127.0.0.1 and prints the
// playground's address. The page loads shardroute-wasm from bindings-wasm/ as built by
// bindings-wasm/build.sh (the Makefile runs it first); nothing else is built or bundled.
// PORT picks the port (default 8000; 0 for any free one).
import { startServer } from '../bindings-wasm/test/static-server.mjs';

const port = Number(process.env.PORT ?? 8000);
const server = await startServer({ port }).catch((err) => {
  console.error(`playground: cannot listen on 127.0.0.1:${port}: ${err.message} (set PORT to another port, or 0)`);
  process.exit(2);
});
console.log(`shardroute playground: http://127.0.0.1:${server.address().port}/playground/  (Ctrl-C stops it)`);
