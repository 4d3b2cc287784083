// Headless Chromium for the viewer's tests, benchmark and screenshot: Debian's chromium driven by playwright-core, offline, with a fresh profile.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the browser is: CHROMIUM_PATH, else Debian's package (`apt-get install chromium`). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser is installed. */
export function chromiumAvailable() {
  return existsSync(CHROMIUM_PATH);
}

/** Flags that keep the browser from reaching any network service of its own. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches the browser with a fresh profile; `close()` closes it and removes the profile.
 * `viewport` is the pages' size (default 1400×1000).
 */
export async function launchChromium(viewport = { width: 1400, height: 1000 }) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'delegate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: ARGS, viewport });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
