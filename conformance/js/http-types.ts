// Uses every export of a package's `./http` entry with the types its http.d.ts declares
// (bindings-js/http.d.ts); type-checked by `tsc --noEmit` in each package (test.sh), never
// run. `shardroute-package/http` is the package's own http.d.ts (each tsconfig.json maps it).
// Lines marked @ts-expect-error must stay errors.
import { HttpError, HttpFollower } from 'shardroute-package/http';
import type { HttpFollowerOptions, HttpFollowerStats, HttpRequestInit, HttpResponseLike } from 'shardroute-package/http';
import type { FollowerStats, Offered, Router } from 'shardroute-package';

export async function typedHttp(ownFetch: (url: string, init: HttpRequestInit) => Promise<HttpResponseLike>): Promise<void> {
  const options: HttpFollowerOptions = {
    config: { reconnect_first_ms: 50, reconnect_max_ms: 200 },
    intervalMs: 1000,
    waitS: 30,
    timeoutMs: 10_000,
    onChange: (changed: HttpFollower) => void changed.router,
    onRefused: (refusing: HttpFollower, offered: Offered) => void [refusing.etag, offered.code],
    onError: (err: unknown) => void (err instanceof HttpError ? [err.code, err.status] : err),
    fetch: ownFetch,
  };
  const follower: HttpFollower = await HttpFollower.start('https://cdn.example.com/topology.json', options);
  await HttpFollower.start('/topology.json');
  await HttpFollower.start('/topology.json', { fetch: null, onChange: null });
  const url: string = follower.url;
  const router: Router | null = follower.router;
  const etag: string | null = follower.etag;
  const stats: HttpFollowerStats = follower.stats;
  const core: FollowerStats = stats;
  const counts: bigint[] = [stats.requests, stats.notModified, core.installed, core.disconnects, stats.refused['stale_epoch'] ?? 0n];
  const offered: Offered | null = await follower.refresh();
  const reached: boolean = await follower.waitForEpoch(3n, 1000);
  await follower.waitForEpoch(4);
  follower.close();
  const err = new HttpError('http', 'GET /: HTTP 503', { status: 503 });
  const code: 'unreachable' | 'http' | 'closed' = err.code;
  const status: number | null = err.status;
  const asError: Error = new HttpError('unreachable', 'gone', { cause: new Error('under') });
  void [url, router, etag, counts, offered, reached, code, status, asError];

  // @ts-expect-error: not a code of HttpError
  void new HttpError('conflict', 'no');
  // @ts-expect-error: made by HttpFollower.start
  void new HttpFollower();
  // @ts-expect-error: waitS is a number of seconds
  await HttpFollower.start('/t', { waitS: '30' });
  // @ts-expect-error: the counters are bigints
  const requests: number = stats.requests;
  void requests;
}
