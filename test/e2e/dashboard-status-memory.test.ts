// The Status view's memory counts on a freshly started hub (Chromium): drawers filed by an earlier
// hub, then a new hub on the same palace that no client has asked for memory yet. The view must show
// the drawer, wing and room counts without any other call loading memory first (it used to say "not
// loaded yet" until something else did); and a palace with no drawer filed says so without loading.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const run = hasChromium() ? describe : describe.skip;
const SHOTS = join('test-results', 'screenshots');

run('Status view memory counts on a fresh hub (Chromium)', { timeout: 120_000 }, () => {
  let dirs: HubDirs;
  let empty: HubDirs;
  let hub: Hub | undefined;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-e2e-status-mem-');
    empty = makeHubDirs('palace-e2e-status-empty-');
    const first = await startTestHub(dirs);
    const mcp = await connectHttpClient(first.url);
    const drawers = [
      ['webapp', 'auth', 'Sessions are signed cookies; the secret rotates monthly.'],
      ['webapp', 'deploy', 'Deploys go through the blue/green pair behind the load balancer.'],
      ['infra', 'dns', 'The zone is hosted on two providers; TTL is five minutes.'],
    ];
    for (const [wing, room, content] of drawers) await callJson(mcp, 'palace_add_drawer', { wing, room, content, added_by: 'e2e' });
    await mcp.close();
    await first.close();
    browser = await launchBrowser();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.close();
    dirs?.cleanup();
    empty?.cleanup();
  });

  it('shows drawers, wings and rooms on a hub that has not loaded memory', async () => {
    hub = await startTestHub(dirs);
    expect(hub.services.memory.isOpen()).toBe(false);
    await page.goto(`${hub.url}/ui/#/status`);
    const counts = page.getByTestId('memory-counts');
    await counts.getByText('Drawers').waitFor({ timeout: 30_000 });
    const text = await counts.innerText();
    expect(text).toMatch(/Drawers\s+3/);
    expect(text).toMatch(/Wings\s+2/);
    expect(text).toMatch(/Rooms\s+3/);
    await hub.close();
    hub = undefined;
  });

  it('says no drawers are filed yet on a palace without any, and loads nothing', async () => {
    hub = await startTestHub(empty);
    await page.goto(`${hub.url}/ui/#/status`);
    const counts = page.getByTestId('memory-counts');
    await counts.getByText('no drawers filed yet').waitFor({ timeout: 20_000 });
    expect(hub.services.memory.isOpen()).toBe(false);
  });

  it('Memory browses wings, rooms and drawers with no query, and comes back to browsing after a search (issue 31)', async () => {
    await hub?.close();
    hub = await startTestHub(dirs);
    mkdirSync(SHOTS, { recursive: true });
    await page.goto(`${hub.url}/ui/#/memory`);
    const wings = page.getByTestId('wings');
    await wings.getByRole('button', { name: 'webapp' }).waitFor({ timeout: 30_000 });
    expect((await wings.innerText()).toLowerCase()).toContain('pick a wing or a room to read its drawers, no query needed');
    await page.screenshot({ path: join(SHOTS, 'memory-browse-wings.png') });
    // A room: its drawers, verbatim, with no query typed.
    await wings.getByRole('button', { name: /^deploy/ }).click();
    await page.getByText('Deploys go through the blue/green pair').first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(SHOTS, 'memory-browse-room.png') });
    await page.getByRole('button', { name: '← all wings' }).click();
    // A search, then back to browsing; a drawer filed meanwhile shows up on refresh.
    await page.getByTestId('memory-query').fill('dns ttl');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByTestId('memory-browse').waitFor();
    const mcp = await connectHttpClient(hub.url);
    await callJson(mcp, 'palace_add_drawer', { wing: 'billing', room: 'invoices', content: 'Invoices round half-up to whole cents.', added_by: 'e2e' });
    await mcp.close();
    await page.getByTestId('memory-browse').click();
    await wings.getByRole('button', { name: 'billing' }).waitFor({ timeout: 20_000 });
    await wings.getByRole('button', { name: 'billing' }).click();
    await page.getByText('Invoices round half-up to whole cents.').first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(SHOTS, 'memory-browse-new-wing.png') });
  });
});
