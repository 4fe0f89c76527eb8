// shardroute/etcd against a production-style etcd (issue 35, item 4): one member of Debian's
// etcd serving https only, client certificates required, and etcd's authentication on,
// started by scripts/etcd_secure.py (a throwaway CA, reserved ports, stopped by PID when
// the tests end, also on failure), with tokens that expire after 2 s of disuse. The client
// and the follower with the CA, a client certificate and a user and password (files, or
// PEM text), a token renewed after it expired, and what is refused: a wrong password
// (`unauthenticated`), a server the client does not trust, and no client certificate
// (`unreachable`). Waits are for events, and once for a token to expire. shardroute-wasm
// runs the same suite over its copy of the shell (bindings-wasm/test/etcd-secure.test.mjs
// imports `secureEtcdSuite`).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';


const SCRIPT = fileURLToPath(new URL('../../scripts/etcd_secure.py', import.meta.url));
const LONG = 30000;
const TOKEN_TTL_S = 2;

const document = (epoch) => ({ format: 'shardroute/1', epoch, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
/** The suite, for a package's entry (`ShardrouteError`) and its `/etcd` entry. */
export function secureEtcdSuite({ ShardrouteError }, { Etcd, EtcdError, EtcdFollower, publish }) {
  const code = (expected) => (err) => err instanceof EtcdError && err instanceof ShardrouteError && err.code === expected;

  describe('shardroute/etcd against etcd with TLS, client certificates and authentication', () => {
    let info = null;
    const stop = () => {
      if (info !== null) execFileSync('python3', [SCRIPT, 'stop', String(info.pid)], { stdio: 'inherit' });
      info = null;
    };
    process.once('exit', stop);

    before(() => {
      info = JSON.parse(execFileSync('python3', [SCRIPT, 'start', '--json', '--auth-token-ttl', String(TOKEN_TTL_S)], { encoding: 'utf8' }));
    });

    after(stop);

    /** POSTs `body` to the gateway's `path` with our own https request (and `token`): `{ status, answer }`. */
    const post = (path, body, token = null) => new Promise((resolve, reject) => {
      const headers = token === null ? {} : { authorization: token };
      const tls = { ca: readFileSync(info.ca_file), cert: readFileSync(info.cert_file), key: readFileSync(info.key_file) };
      const made = httpsRequest(`${info.url}${path}`, { method: 'POST', headers, ...tls }, (response) => {
        const pieces = [];
        response.on('data', (piece) => pieces.push(piece));
        response.on('end', () => resolve({ status: response.statusCode, answer: JSON.parse(Buffer.concat(pieces).toString()) }));
      });
      made.on('error', reject);
      made.end(JSON.stringify(body));
    });

    const secure = (more = {}) => new Etcd(info.url, {
      ca: info.ca_file, cert: info.cert_file, key: info.key_file, user: info.user, password: info.password, ...more,
    });

    test('calls, publish and a follower over https with a client certificate and a user', async () => {
      assert.ok(info.url.startsWith('https://'));
      const etcd = secure();
      const key = '/secure/topology';
      const revision = await etcd.put('/secure/plain', 'x');
      assert.deepEqual(await etcd.get('/secure/plain'), { value: 'x', modRevision: revision });
      await publish(etcd, key, document(1));
      const follower = await EtcdFollower.start(etcd, key, { also: ['/secure/plain'] });
      try {
        assert.equal(follower.router.epoch, 1n);
        assert.equal(follower.companions.get('/secure/plain'), 'x');
        await publish(etcd, key, document(2));
        assert.equal(await follower.waitForEpoch(2, LONG), true);
      } finally {
        follower.close();
      }
      // PEM text instead of paths.
      const pem = secure({ ca: readFileSync(info.ca_file, 'utf8'), cert: readFileSync(info.cert_file, 'utf8'), key: readFileSync(info.key_file, 'utf8') });
      assert.equal(JSON.parse((await pem.get(key)).value).epoch, 2);
      assert.equal(await pem.deletePrefix('/secure/'), 2n);
    });

    test('an expired token is renewed and the request sent again', async () => {
      const etcd = secure();
      await etcd.put('/expiry/a', '1');
      const { answer: { token } } = await post('/v3/auth/authenticate', { name: info.user, password: info.password });
      assert.equal((await post('/v3/kv/range', { key: btoa('/expiry/a') }, token)).status, 200);
      await delay(TOKEN_TTL_S * 1000 + 1500); // the tokens expire unused
      const expired = await post('/v3/kv/range', { key: btoa('/expiry/a') }, token);
      assert.match(expired.answer.message ?? expired.answer.error, /invalid auth token/); // as the client's is now
      assert.equal((await etcd.get('/expiry/a')).value, '1');
      await publish(etcd, '/expiry/topology', document(1));
      const follower = await EtcdFollower.start(etcd, '/expiry/topology', { idleMs: 500 });
      try {
        await delay(TOKEN_TTL_S * 1000 + 1500); // the follower's idle reads renew it as they need
        await publish(etcd, '/expiry/topology', document(2));
        assert.equal(await follower.waitForEpoch(2, LONG), true);
        assert.equal(follower.stats.disconnects, 0n);
      } finally {
        follower.close();
      }
    });

    test('a wrong password is unauthenticated; an untrusted server or no client certificate is unreachable', async () => {
      await assert.rejects(secure({ password: 'wrong' }).get('/x'), code('unauthenticated'));
      await assert.rejects(EtcdFollower.start(secure({ password: 'wrong' }), '/x'), code('unauthenticated'));
      // The global fetch: the throwaway CA is not trusted.
      await assert.rejects(new Etcd(info.url, { user: info.user, password: info.password }).get('/x'), code('unreachable'));
      // Trusted, but etcd requires a client certificate.
      await assert.rejects(new Etcd(info.url, { ca: info.ca_file, user: info.user, password: info.password }).get('/x'), code('unreachable'));
      // user and password go together.
      assert.throws(() => new Etcd(info.url, { user: info.user }), (err) => err instanceof ShardrouteError && err.code === 'invalid_argument');
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  secureEtcdSuite(await import('shardroute'), await import('shardroute/etcd'));
}
