// The dashboard end to end: a real hub (startHub on port 0, with a token) serving the built /ui,
// Debian Chromium driven by playwright-core, and events appended through the official MCP client.
// Covers the token gate, live events, a delegation moving through its states, the patch diff with
// sha256 and size, copying from the setup view, the command palette, the long-poll fallback and a
// hub going down and coming back. Saves a screenshot of every view under test-results/screenshots/.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { hasChromium, launchBrowser, screenshot, type TestBrowser } from '../helpers/browser.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  sha256Hex,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';

const TOKEN = 'e2e0'.repeat(16);
const REQUESTER = 'laptop-claude';
const WORKER = 'laptop-codex';
const PATCH = [
  'diff --git a/src/auth/login.ts b/src/auth/login.ts',
  'index 3f2a9c1..8b1d0e4 100644',
  '--- a/src/auth/login.ts',
  '+++ b/src/auth/login.ts',
  '@@ -12,7 +12,10 @@ export async function login(req: Request): Promise<Session> {',
  '   const { user, password } = await readCredentials(req);',
  '-  const account = await accounts.find(user);',
  '-  if (!account || account.password !== password) {',
  '+  const account = await accounts.find(user.trim().toLowerCase());',
  '+  if (!account) {',
  "+    throw new AuthError('unknown user');",
  '+  }',
  '+  if (!(await verifyPassword(account, password))) {',
  "     throw new AuthError('wrong password');",
  '   }',
  '   return sessions.create(account.id);',
  ' }',
  '',
].join('\n');

interface Ev {
  id: string;
}

const run = hasChromium() ? describe : describe.skip;
if (!hasChromium() && process.env.CI)
  throw new Error('/usr/bin/chromium is missing: .ci/run installs it (apt-get install chromium)');

run('dashboard at /ui (Chromium)', { timeout: 90_000 }, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let mcp: Client;
  let browser: TestBrowser;
  let page: Page;

  const append = (args: Record<string, unknown>): Promise<Ev> =>
    callJson<Ev>(mcp, 'palace_event_append', { stream: 'project/webapp', room: 'delegation', ...args });
  const ack = (eventId: string, from: string, status: string, body?: string): Promise<Ev> =>
    callJson<Ev>(mcp, 'palace_event_ack', {
      event_id: eventId,
      from_agent: from,
      status,
      ...(body ? { body } : {}),
    });
  const go = async (view: string): Promise<void> => {
    await page.getByTestId(`nav-${view}`).click();
    await page.getByTestId('view-title').waitFor();
  };
  const taskRow = (id: string) => page.locator(`[data-testid="task-row"][data-task-id="${id}"]`);
  /** A screenshot once the "Copied …" confirmations have faded. */
  const shot = async (name: string): Promise<void> => {
    await expect.poll(() => page.locator('.toast').count(), { timeout: 10_000 }).toBe(0);
    await screenshot(page, name);
  };

  beforeAll(async () => {
    dirs = makeHubDirs('palace-e2e-');
    hub = await startTestHub(dirs, { token: TOKEN });
    mcp = await connectHttpClient(hub.url, { token: TOKEN, name: 'e2e-agent' });
    browser = await launchBrowser();
    page = browser.page;
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: hub.url });
  });

  afterAll(async () => {
    await browser?.close();
    await mcp?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('asks for the token once, keeps it in this tab only and never in the URL', async () => {
    await append({
      type: 'status',
      from_agent: 'desk-cursor',
      to_agent: '*',
      room: 'status',
      body: 'watching project/webapp for task.request',
    });
    const res = await page.goto(`${hub.url}/ui/`);
    expect(res?.status()).toBe(200);
    await page.getByTestId('token-gate').waitFor();
    await shot('01-token-gate');
    await page.getByTestId('token-input').fill('not-the-token');
    await page.getByTestId('token-submit').click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('refused');

    await page.getByTestId('token-input').fill(TOKEN);
    await page.getByTestId('token-submit').click();
    await page.getByTestId('event-table').waitFor();
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate('sessionStorage.getItem("palace.token")')).toBe(TOKEN);
    expect(await page.evaluate('localStorage.length')).toBe(0);

    await page.reload();
    await page.getByTestId('event-table').waitFor();
    expect(await page.getByTestId('token-gate').count()).toBe(0);
  });

  it('shows events live as agents append them through MCP', async () => {
    await page.locator('[data-testid="connection"][data-feed="stream"]').waitFor();
    const e1 = await append({
      type: 'status',
      from_agent: REQUESTER,
      to_agent: '*',
      room: 'status',
      body: 'starting on the login bug',
    });
    await page.locator(`[data-event-id="${e1.id}"]`).waitFor();
    const e2 = await append({
      type: 'note.shared',
      from_agent: WORKER,
      to_agent: REQUESTER,
      body: 'the session cookie is set twice',
    });
    await page.locator(`[data-event-id="${e2.id}"]`).waitFor();
    // Newest first.
    const ids = await page
      .getByTestId('event-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event-id')));
    expect(ids.indexOf(e2.id)).toBeLessThan(ids.indexOf(e1.id));

    await page.getByTestId('filter-agent').fill(WORKER);
    await expect.poll(() => page.getByTestId('event-row').count()).toBe(1);
    await page.getByTestId('filter-agent').fill('');
    await expect.poll(() => page.getByTestId('event-row').count()).toBe(3);
  });

  it('moves a delegation from request to applied, live, in the Tasks view', async () => {
    await go('tasks');
    await page.getByTestId('task-chip-all').click();
    const request = await append({
      type: 'task.request',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: 'task_fix_login',
      status: 'open',
      branch: 'fix/login',
      base_commit: '3f2a9c1',
      body: 'Goal: users with trailing spaces in their name cannot log in.\nBranch: fix/login from 3f2a9c1.\nDone when: login trims and lower-cases the user name; npm test passes.',
    });
    const row = taskRow('task_fix_login');
    await expect.poll(() => row.getAttribute('data-status')).toBe('open');

    await ack(request.id, WORKER, 'claimed');
    await expect.poll(() => row.getAttribute('data-status')).toBe('claimed');

    const submitted = await callJson<{ event: Ev; artifact: { id: string; sha256: string } }>(
      mcp,
      'palace_patch_submit',
      {
        content: PATCH,
        from_agent: WORKER,
        correlation_id: 'task_fix_login',
        body: 'Trim and lower-case the user name before lookup; split unknown user from wrong password. npm test: 212 passed.',
      },
    );
    await expect.poll(() => row.getAttribute('data-status')).toBe('ready');

    await ack(
      submitted.event.id,
      REQUESTER,
      'applied',
      'sha256 checked, applied on fix/login, npm test green',
    );
    await expect.poll(() => row.getAttribute('data-status')).toBe('applied');

    await row.click();
    const history = page.getByTestId('task-history').locator('li');
    await expect.poll(() => history.count()).toBe(4);
    expect(await page.getByTestId('task-history').innerText()).toMatch(
      /open[\s\S]*claimed[\s\S]*ready[\s\S]*applied/,
    );
  });

  it('renders an attached patch as a diff with its sha256 and size', async () => {
    await go('events');
    const row = page.locator('[data-testid="event-row"][data-type="patch.ready"]').first();
    await row.click();
    const detail = page.getByTestId('event-detail');
    await detail.getByTestId('diff').waitFor();
    expect(await detail.getByTestId('artifact-sha').innerText()).toBe(sha256Hex(PATCH));
    expect(await detail.getByTestId('artifact-size').innerText()).toContain(`${Buffer.byteLength(PATCH)} B`);
    await detail.getByText('verified').waitFor();
    expect(await detail.locator('.diff-add').count()).toBe(5);
    expect(await detail.locator('.diff-del').count()).toBe(2);
    await shot('02-events-patch');
  });

  it('copies the token and a client config from Tokens & setup', async () => {
    await go('setup');
    expect(await page.getByTestId('token-value').innerText()).not.toContain(TOKEN);
    await page.getByTestId('reveal-token').click();
    expect(await page.getByTestId('token-value').innerText()).toBe(TOKEN);
    await page.getByTestId('reveal-token').click();
    await page.getByTestId('copy-token').click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(TOKEN);

    await page.getByTestId('copy-config-claude-code-http').click();
    await expect
      .poll(() => page.evaluate('navigator.clipboard.readText()'))
      .toBe(
        `claude mcp add --transport http palace ${hub.url}/mcp --header "Authorization: Bearer ${TOKEN}"`,
      );
    await page.getByTestId('client-tab-codex').click();
    await page.getByTestId('config-codex-stdio').waitFor();
    await shot('03-setup');
  });

  it('reaches every view and action from the command palette, and lists shortcuts on ?', async () => {
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette').waitFor();
    for (const view of ['Events', 'Tasks', 'Peers', 'Memory', 'Tokens & setup', 'Status'])
      expect(
        await page
          .locator('.palette-item')
          .filter({ hasText: `Go to ${view}` })
          .count(),
      ).toBe(1);
    await shot('04-command-palette');
    await page.getByTestId('palette-input').fill('copy codex');
    await expect.poll(() => page.locator('.palette-item').count()).toBe(2);
    await page.getByTestId('palette-input').fill('go tasks');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('view-title').innerText()).toBe('Tasks');

    await page.keyboard.press('g');
    await page.keyboard.press('h');
    await expect.poll(() => page.getByTestId('view-title').innerText()).toBe('Status');
    await page.keyboard.press('?');
    await page.getByTestId('shortcuts').waitFor();
    await shot('05-shortcuts');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('shortcuts').count()).toBe(0);
  });

  it('shows status and peers as this hub serves them', async () => {
    // The hub checks its log once it is quiet (hub/src/background-gate.ts): its verdict first, then the view's.
    const verdict = async (): Promise<string> =>
      ((await (await fetch(`${hub.url}/statusz`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { palace: { sqlite_integrity: string } }).palace.sqlite_integrity;
    await expect.poll(verdict, { timeout: 20_000 }).toBe('ok');
    await go('status');
    await page.getByTitle('Refresh').click();
    await expect.poll(() => page.getByTestId('sqlite-integrity').innerText()).toContain('ok');
    expect(await page.getByText('e2e-agent').count()).toBeGreaterThan(0);
    await shot('06-status');

    // Two peers in peers.json: a real second hub, and an address where nothing listens.
    const deskDirs = makeHubDirs('palace-e2e-desk-');
    const desk = await startTestHub(deskDirs);
    try {
      for (const body of ['desk: started', 'desk: watching'])
        await desk.services.logstream.append({
          type: 'status',
          stream: 'project/webapp',
          room: 'status',
          from_agent: 'desk-cursor',
          to_agent: '*',
          body,
        });
      writeFileSync(
        join(dirs.palace, 'peers.json'),
        JSON.stringify({
          peers: [
            { name: 'desk', url: desk.url },
            { name: 'ci-box', url: 'http://127.0.0.1:9', token: 'unused' },
          ],
        }),
      );
      // A JSON POST (the hub answers 415 to a body-less one): the round runs now, not at the next interval.
      const round = await fetch(`${hub.url}/sync/round`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect([200, 404]).toContain(round.status);
      await go('peers');
      if (round.status === 404) {
        await page.getByTestId('peers-unavailable').waitFor();
      } else {
        const rows = page.getByTestId('peer-table').locator('tbody tr');
        await expect.poll(() => rows.count()).toBe(2);
        const deskRow = rows.filter({ hasText: 'desk' });
        const ciRow = rows.filter({ hasText: 'ci-box' });
        await expect.poll(() => deskRow.innerText()).toMatch(/reachable[\s\S]*ahead/);
        expect(await ciRow.innerText()).toContain('unreachable');
        expect(await page.getByText('Known through gossip').count()).toBe(0);
      }
    } finally {
      await desk.close();
      deskDirs.cleanup();
    }
    await shot('07-peers');
  });

  it('searches memory, opens a drawer with its provenance, and shows facts over time', async () => {
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    await go('memory');
    if (!tools.includes('palace_search') || !tools.includes('palace_add_drawer')) {
      await page.getByTestId('memory-unavailable').waitFor();
      return;
    }
    const drawers = [
      {
        wing: 'webapp',
        room: 'decisions',
        source_file: 'docs/adr/007-password-hashing.md',
        content:
          'We hash passwords with argon2id (m=64 MiB, t=3, p=1). Decided on 2026-03-02 after bcrypt silently truncated long passphrases at 72 bytes.',
      },
      {
        wing: 'webapp',
        room: 'decisions',
        source_file: 'docs/adr/004-database.md',
        content:
          'Postgres 16 is the primary store; SQLite only for local development. Migrations run with the app at start-up.',
      },
      {
        wing: 'webapp',
        room: 'incidents',
        source_file: 'notes/2026-02-11-login-outage.md',
        content:
          'Login outage on 2026-02-11: a session cookie set twice made Safari drop both. Fixed by setting it once in the auth middleware.',
      },
    ];
    for (const d of drawers) await callJson(mcp, 'palace_add_drawer', { ...d, added_by: REQUESTER }, 120_000);
    await callJson(mcp, 'palace_kg_add', {
      subject: 'webapp',
      predicate: 'hashes_passwords_with',
      object: 'bcrypt',
      valid_from: '2024-01-10',
      valid_to: '2026-03-02',
    });
    await callJson(mcp, 'palace_kg_add', {
      subject: 'webapp',
      predicate: 'hashes_passwords_with',
      object: 'argon2id',
      valid_from: '2026-03-02',
    });
    await callJson(mcp, 'palace_kg_add', {
      subject: 'webapp',
      predicate: 'stores_data_in',
      object: 'postgres 16',
      valid_from: '2025-06-01',
    });

    await page.reload();
    await page.getByTestId('memory-query').fill('how are passwords hashed');
    await page.keyboard.press('Enter');
    const hit = page.locator('.hit').filter({ hasText: 'argon2id' }).first();
    await hit.waitFor({ timeout: 60_000 });
    await hit.click();
    const drawer = page.getByTestId('drawer-detail');
    await drawer.getByText('docs/adr/007-password-hashing.md').waitFor();
    expect(await drawer.locator('.body-text').innerText()).toBe(drawers[0]?.content);
    expect(await drawer.innerText()).toContain(REQUESTER);
    // The preview is whole lines with the query's terms marked.
    expect(await hit.locator('[data-testid="hit-preview"] mark').count()).toBeGreaterThan(0);
    // Each hit shows the fused score the list is sorted by, so the figures never rise down the list.
    const scores = page.getByTestId('hit-score');
    const shown = await Promise.all((await scores.all()).map(async (s) => Number(await s.getAttribute('data-score'))));
    expect(shown.length).toBe(await page.locator('.hit').count());
    expect(shown.every((s, i) => Number.isFinite(s) && (i === 0 || s <= (shown[i - 1] ?? s)))).toBe(true);
    await shot('08-memory-search');
    await page.screenshot({ path: '/tmp/shots-memscale/memory-search.png' });

    // A wing's drawers are listed without a query, paged from the hub.
    await page.reload();
    await page.getByTestId('wings').getByRole('button', { name: 'webapp' }).click();
    const listed = page.getByTestId('room-drawers').locator('.hit');
    await expect.poll(() => listed.count()).toBe(3);
    expect((await page.getByTestId('room-drawers').innerText()).toLowerCase()).toContain('3 drawers');
    await page.screenshot({ path: '/tmp/shots-memscale/memory-room-browse.png' });

    // The KG tab lists entities before any query; one click shows its facts.
    await page.getByRole('tab', { name: 'Knowledge graph' }).click();
    const entities = page.getByTestId('kg-entities');
    await entities.getByRole('button', { name: /webapp/ }).waitFor();
    await page.screenshot({ path: '/tmp/shots-memscale/memory-kg-entities.png' });
    await page.getByTestId('kg-entity').fill('webapp');
    await page.keyboard.press('Enter');
    const facts = page.locator('.kg tbody tr');
    await expect.poll(() => facts.count()).toBe(3);
    expect(await facts.first().innerText()).not.toContain('bcrypt'); // current facts first
    expect(await facts.last().innerText()).toContain('bcrypt');
    await shot('08-memory-kg');

    // Status shows memory counts and the embedder.
    await go('status');
    const counts = page.getByTestId('memory-counts');
    await counts.getByText('Drawers').waitFor({ timeout: 30_000 });
    const text = await counts.innerText();
    expect(text).toMatch(/Drawers\s+3/);
    expect(text).toMatch(/KG entities\s+4/);
    expect(text).toContain('use-lite');
    await page.screenshot({ path: '/tmp/shots-memscale/status-memory.png', fullPage: true });
  });

  it('says plainly when a hub has no memory tools or peer sync yet', async () => {
    // An older hub: tools/list without the memory tools, and no /sync/peers route.
    await page.route('**/sync/peers', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: '{"error":{"code":"http.not_found","message":"no route"}}',
      }),
    );
    await page.route('**/mcp', async (route) => {
      const body = route.request().postDataJSON() as { method?: string } | null;
      if (body?.method !== 'tools/list') return route.continue();
      const res = await route.fetch();
      const text = await res.text();
      const json = text.trim().startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
      const reply = JSON.parse(json) as { result: { tools: { name: string }[] } };
      reply.result.tools = reply.result.tools.filter(
        (t) => !/search|drawer|wings|kg_|taxonomy|rooms/.test(t.name),
      );
      return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(reply) });
    });
    await page.reload();
    await go('memory');
    await page.getByTestId('memory-unavailable').waitFor();
    expect(await page.getByTestId('memory-unavailable').innerText()).toContain(
      'Memory is not available on this hub yet',
    );
    await shot('08-memory-unavailable');
    await go('peers');
    await page.getByTestId('peers-unavailable').waitFor();
    expect(await page.getByTestId('peers-unavailable').innerText()).toContain('Peer sync not available');
    await page.unrouteAll({ behavior: 'wait' });
    await page.reload();
    await page.getByTestId('view-title').waitFor();
  });

  it('says plainly when the hub is down, keeps the last data, and resumes when it is back', async () => {
    await go('events');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('event-detail').count()).toBe(0);
    await shot('10-events');
    const before = await page.getByTestId('event-row').count();
    const port = hub.port;
    await hub.close();
    await page.getByTestId('hub-down').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('event-row').count()).toBe(before);
    expect(await page.getByTestId('connection').getAttribute('data-phase')).toBe('down');
    await shot('11-hub-down');

    hub = await startTestHub(dirs, { token: TOKEN, port });
    await mcp.close();
    mcp = await connectHttpClient(hub.url, { token: TOKEN, name: 'e2e-agent' });
    await page.locator('[data-testid="connection"][data-feed="stream"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('hub-down').count()).toBe(0);
    const after = await append({
      type: 'status',
      from_agent: REQUESTER,
      to_agent: '*',
      room: 'status',
      body: 'back after the restart',
    });
    await page.locator(`[data-event-id="${after.id}"]`).waitFor();
    expect(await page.getByTestId('event-row').count()).toBe(before + 1);
  });
  it('marks a claimed task with nothing for 10 minutes as stalled', async () => {
    const request = await append({
      type: 'task.request',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: 'task_add_metrics',
      status: 'open',
      body: 'Goal: export request latency histograms on /metrics.',
    });
    await ack(request.id, WORKER, 'claimed');
    await append({
      type: 'task.request',
      from_agent: REQUESTER,
      to_agent: 'desk-cursor',
      correlation_id: 'task_docs_typo',
      status: 'open',
      body: 'Goal: fix the typos in docs/setup.md.',
    });
    const flaky = await append({
      type: 'task.request',
      from_agent: 'desk-cursor',
      to_agent: WORKER,
      correlation_id: 'task_flaky_e2e',
      status: 'open',
      body: 'Goal: make the checkout e2e test deterministic.',
    });
    await ack(flaky.id, WORKER, 'claimed');
    await append({
      type: 'task.reply',
      from_agent: WORKER,
      to_agent: 'desk-cursor',
      correlation_id: 'task_flaky_e2e',
      status: 'blocked',
      body: 'needs a seeded payment sandbox',
    });

    await go('tasks');
    await page.getByTestId('task-chip-all').click();
    await expect.poll(() => taskRow('task_add_metrics').getAttribute('data-status')).toBe('claimed');
    expect(await taskRow('task_add_metrics').getAttribute('data-stalled')).toBe('false');
    // Fifteen minutes later by the page's clock: nothing happened on the claimed task.
    await page.clock.setFixedTime(new Date(Date.now() + 15 * 60_000));
    await expect
      .poll(() => taskRow('task_add_metrics').getAttribute('data-stalled'), { timeout: 15_000 })
      .toBe('true');
    expect(await taskRow('task_add_metrics').innerText()).toContain('claimed, nothing for 15 min');
    expect(await taskRow('task_fix_login').getAttribute('data-stalled')).toBe('false');
    await shot('09-tasks');
    await taskRow('task_add_metrics').click();
    await page.getByTestId('task-detail').waitFor();
    await shot('09-tasks-detail');
  });
});

run('dashboard when the stream is full (Chromium)', { timeout: 60_000 }, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let browser: TestBrowser;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-e2e-poll-');
    // No stream slot at all: every /logstream/stream answers 503 and the page long-polls instead.
    hub = await startTestHub(dirs, { env: { PALACE_SSE_MAX_CLIENTS: '0' } });
    // This page also shows the dark theme (the system's colour scheme).
    browser = await launchBrowser({ colorScheme: 'dark' });
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('falls back to palace_event_wait and still shows new events live', async () => {
    const { page } = browser;
    await page.goto(`${hub.url}/ui/#/events`);
    await page.locator('[data-testid="connection"][data-feed="poll"]').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('token-gate').count()).toBe(0);
    const event = await hub.services.logstream.append({
      type: 'task.request',
      stream: 'project/webapp',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: 'task_poll',
      body: 'delivered by long-poll',
    });
    await page.locator(`[data-event-id="${event.id}"]`).waitFor();
    expect(await page.getByTestId('connection').innerText()).toContain('polling');
    await page.locator(`[data-event-id="${event.id}"]`).click();
    await page.getByTestId('event-detail').waitFor();
    await screenshot(page, '12-events-dark-polling');
  });
});
