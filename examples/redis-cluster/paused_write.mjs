// One write of shardroute/redis against a primary that is about to be paused, for
// test_paused.py: connects (the table read), prints {"event": "ready"}, waits for a line
// on stdin (sent once the primary is stopped), writes `key`, and prints
// {"event": "written", "ok", "end_ms" (wall clock), "stats"}.
//
//     node paused_write.mjs --seeds 127.0.0.1:7000 --key '{paused}:node'
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { ClusterClient } from 'shardroute/redis';

const { values } = parseArgs({ options: { seeds: { type: 'string' }, key: { type: 'string' } } });
const client = await ClusterClient.connect(values.seeds.split(','));
await client.set(values.key, 'before');
console.log(JSON.stringify({ event: 'ready' }));
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() !== 'go') break;
  let ok = true;
  let error = null;
  try {
    await client.set(values.key, 'during');
  } catch (err) {
    ok = false;
    error = String(err);
  }
  const stats = client.stats;
  console.log(JSON.stringify({
    event: 'written', ok, error, end_ms: Date.now(), errors: stats.errors,
    stall_resends: stats.stallResends,
  }));
  break;
}
await client.close();
