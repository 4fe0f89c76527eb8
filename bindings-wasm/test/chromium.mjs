// Headless Chromium for the pages that load the web build: Debian's Chromium launched
// through playwright-core (this package's devDependency), and the read-only static server
// of the repository root (static-server.mjs). Used by test/browser.mjs (the conformance
// vectors), test/edge.test.mjs, bench/browser/bench.mjs and playground/test/. Every wait is
// bounded.
import { chromium } from 'playwright-core';

export { startServer } from './static-server.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_TIMEOUT_MS = 60_000;

/** Debian's Chromium (CHROMIUM_PATH to override), headless. */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: LAUNCH_TIMEOUT_MS,
  });
}

/** A new page of `browser` whose uncaught errors, console errors and warnings go to stderr. */
export async function openPage(browser, timeoutMs) {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeoutMs);
  page.on('pageerror', (err) => console.error(`[page error] ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.error(`[page ${message.type()}] ${message.text()}`);
  });
  return page;
}
