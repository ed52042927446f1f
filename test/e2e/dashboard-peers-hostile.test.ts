// The Peers view after the issue-29 attacks (Chromium): an origin caught signing two chains shows as
// a red "Equivocation" card, and the events a first-use impostor gave under a replica id whose real
// key was pinned later show as quarantined. Real hubs on port 0, a fake origin peer with real keys.
// Saves test-results/screenshots/20-peers-equivocation.png.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { fakeIdentity, fakeLog, serveFakeOrigin, type FakeOriginPeer } from '../../bench/fake-origin.js';
import type { Hub } from '../../hub/src/server.js';
import { hasChromium, launchBrowser, screenshot, type TestBrowser } from '../helpers/browser.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { appendMany, writePeers } from '../helpers/sync.js';

const TOKEN = 'e2e1'.repeat(16);
const run = hasChromium() ? describe : describe.skip;

run('Peers view: equivocation and quarantine (Chromium)', { timeout: 90_000 }, () => {
  const hubs: Array<{ hub: Hub; dirs: HubDirs }> = [];
  const fakes: FakeOriginPeer[] = [];
  let browser: TestBrowser | undefined;

  const hubAt = async (prefix: string, token?: string): Promise<{ hub: Hub; dirs: HubDirs }> => {
    const dirs = makeHubDirs(prefix);
    const hub = await startTestHub(dirs, { ...(token ? { token } : {}), env: { PALACE_SYNC_INTERVAL: '0' } });
    hubs.push({ hub, dirs });
    return { hub, dirs };
  };

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    for (const f of fakes) await f.close();
    for (const { hub, dirs } of hubs.reverse()) {
      await hub.close();
      dirs.cleanup();
    }
  });

  it('shows an equivocating origin in red and quarantined impostor events', async () => {
    const e = await hubAt('palace-e2e-equiv-e-', TOKEN);
    const f = await hubAt('palace-e2e-equiv-f-');
    const a = await hubAt('palace-e2e-equiv-a-');
    // Equivocation: one origin key, chain "one" for E and chain "two" for F.
    const origin = fakeIdentity();
    const at = Date.now();
    const one = fakeLog(origin, 3, (i) => `one ${i}`, undefined, at);
    const two = fakeLog(origin, 3, (i) => `two ${i}`, one.events.map((ev) => ev.id), at);
    const fake = await serveFakeOrigin(origin, (req) => (req.headers.authorization === 'Bearer for-e' ? one : two));
    fakes.push(fake);
    // Late pin: an impostor gives E two events under A's replica id before A is pinned.
    await appendMany(a.hub.services.logstream, 2, 'a-claude');
    const aLog = a.hub.services.logstream;
    const impostor = fakeIdentity(aLog.replicaId);
    const forged = fakeLog(impostor, 2, (i) => `forged ${i}`);
    const mallory = await serveFakeOrigin(impostor, () => forged);
    fakes.push(mallory);

    writePeers(e.dirs.palace, [
      { name: 'origin', url: fake.url, token: 'for-e' },
      { name: 'mallory', url: mallory.url },
    ]);
    writePeers(f.dirs.palace, [{ name: 'origin', url: fake.url, token: 'for-f' }]);
    await e.hub.services.sync?.runRound();
    await f.hub.services.sync?.runRound();
    writePeers(e.dirs.palace, [
      { name: 'origin', url: fake.url, token: 'for-e' },
      { name: 'f', url: f.hub.url, public_key: f.hub.services.logstream.store.publicKey },
      { name: 'a', url: a.hub.url, public_key: aLog.store.publicKey, replica_id: aLog.replicaId } as never,
    ]);
    const round = await e.hub.services.sync?.runRound();
    expect(round?.results.find((r) => r.peer_name === 'f')?.error?.code).toBe('sync.equivocation');
    expect(round?.results.find((r) => r.peer_name === 'a')).toMatchObject({ ok: true, pulled_events: 2 });

    const page = browser?.page;
    if (!page) throw new Error('no browser');
    await page.goto(`${e.hub.url}/ui/`);
    await page.getByTestId('token-input').fill(TOKEN);
    await page.getByTestId('token-submit').click();
    await page.getByTestId('nav-peers').click();
    const card = page.getByTestId('equivocations');
    await card.waitFor();
    expect(await card.innerText()).toMatch(new RegExp(`Origin ${origin.replica} signed two different chains at position 3`));
    expect(await card.locator('.callout-bad').count()).toBe(1);
    expect(await page.getByTestId('quarantined').innerText()).toMatch(new RegExp(`2 events that claimed origin ${aLog.replicaId}`));
    const fRow = page.getByTestId('peer-table').locator('tbody tr').filter({ hasText: f.hub.url });
    expect(await fRow.innerText()).toMatch(/sync\.equivocation|signed two different chains/);
    await screenshot(page, '20-peers-equivocation');
  });
});
