// Debian Chromium driven by playwright-core for end-to-end tests: the flags this machine needs, a
// fresh user-data-dir per launch (removed on close), and screenshots under test-results/.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type BrowserContext, type Page } from 'playwright-core';

import { REPO_ROOT } from './hub.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-results', 'screenshots');

/** Chromium is installed (CI installs it in .ci/run; locally `apt-get install chromium`). */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<TestBrowser> {
  const dataDir = mkdtempSync(join(tmpdir(), 'palace-chromium-'));
  const context = await chromium.launchPersistentContext(dataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: options.viewport ?? { width: 1440, height: 900 },
    deviceScaleFactor: 1,
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Saves a full-window screenshot as test-results/screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, animations: 'disabled' });
  return path;
}
