// The conformance vectors in headless Chromium, against the web build: serves the
// repository root read-only and opens test/browser.html in Debian's Chromium
// (test/chromium.mjs), reads the page's result, prints the summary line (runner
// `wasm-chromium`) and writes its count file. Run with `node test/browser.mjs`; exits
// non-zero on any failure. Every wait is bounded.
import { filter, report, vectorFileNames } from '../../conformance/js/vectors.mjs';
import { launchChromium, openPage, startServer } from './chromium.mjs';

const RUNNER = 'wasm-chromium';
const PAGE_TIMEOUT_MS = 120_000;
const OVERALL_TIMEOUT_MS = 300_000;

async function main() {
  // `/__vectors`: the URLs of the vector files, for the page to fetch.
  const routes = { '/__vectors': () => vectorFileNames().map((name) => `/conformance/vectors/${name}`) };
  const server = await startServer({ routes });
  const { port } = server.address();
  let browser;
  try {
    browser = await launchChromium();
    const page = await openPage(browser, PAGE_TIMEOUT_MS);
    const url = `http://127.0.0.1:${port}/bindings-wasm/test/browser.html?filter=${encodeURIComponent(filter)}`;
    await page.goto(url, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
    await page.waitForFunction(() => window.__shardroute && window.__shardroute.done === true, null, {
      timeout: PAGE_TIMEOUT_MS,
    });
    const outcome = await page.evaluate(() => window.__shardroute);
    if (outcome.error !== undefined) {
      console.error(`${RUNNER}: the page failed: ${outcome.error}`);
      return false;
    }
    const ok = report(RUNNER, outcome.result);
    if (outcome.beforeInit !== 'ok') {
      console.error(`${RUNNER}: a call before init() is not a ShardrouteError not_initialized: ${outcome.beforeInit}`);
      return false;
    }
    if (outcome.identity !== 'ok') {
      console.error(`${RUNNER}: a thrown error is not the exported ShardrouteError: ${outcome.identity}`);
      return false;
    }
    return ok;
  } finally {
    await browser?.close().catch(() => {});
    await new Promise((done) => server.close(done));
  }
}

const watchdog = setTimeout(() => {
  console.error(`${RUNNER}: no result after ${OVERALL_TIMEOUT_MS / 1000} s`);
  process.exit(2);
}, OVERALL_TIMEOUT_MS);
watchdog.unref();

main().then(
  (ok) => {
    process.exitCode = ok ? 0 : 1;
  },
  (err) => {
    console.error(`${RUNNER}: ${(err && err.stack) || err}`);
    process.exitCode = 1;
  },
);
