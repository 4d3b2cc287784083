// Makes docs/viewer-music.png, the README's picture of `delegate-run view` (npm run screenshot): the music example run, viewed, opened in headless Chromium.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromiumAvailable, launchChromium } from '../bench/chromium.js';

const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'dist', 'cli', 'run.js');
const out = join(root, 'docs', 'viewer-music.png');

if (!chromiumAvailable()) {
  process.stderr.write('No chromium to take the screenshot with: apt-get install chromium, or set CHROMIUM_PATH.\n');
  process.exit(1);
}
const folder = mkdtempSync(join(tmpdir(), 'viewer-screenshot-'));
try {
  // The README's first example, replayed from its cassette: no key, no network.
  const env = { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };
  const request = join(root, 'requests', 'music', 'producer.json');
  const input = '{"brief":"a sad ballad","ambience":"rain on a window"}';
  execFileSync(process.execPath, [bin, request, '--input', input, '--trace', 'music.jsonl', '--quiet'], { cwd: folder, env, stdio: 'ignore' });
  execFileSync(process.execPath, [bin, 'view', 'music.jsonl'], { cwd: folder, env, stdio: 'ignore' });
  const browser = await launchChromium({ width: 1400, height: 900 });
  try {
    const page = await browser.context.newPage();
    await page.goto(pathToFileURL(join(folder, 'music.html')).href);
    await page.waitForSelector('body[data-ready="true"]');
    // The composer's first model call, opened: what it was sent and what it answered.
    await page.locator('li.run > .row .name', { hasText: 'composer' }).click();
    await page.locator('#details details.exchange summary').first().click();
    await page.screenshot({ path: out, fullPage: true });
    process.stdout.write(`${out}\n`);
  } finally {
    await browser.close();
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
