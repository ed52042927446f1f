// The human at the desk, end to end in Chromium against real hubs: with the token, the dashboard
// files a task request, replies on a task, rejects then approves a patch, releases a claim and
// cancels a reservation, each through the hub's MCP tools under the configured desk agent name;
// a read-only hub refuses the writes and the page shows the refusal; an opted-in notification
// fires for a task addressed to the desk and for a patch on a task it opened. Screenshots land in
// test-results/screenshots/desk-*.png.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import { hasChromium, launchBrowser, screenshot, type TestBrowser } from '../helpers/browser.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const TOKEN = 'desk'.repeat(16);
const DESK = 'desk-ana';
const WORKER = 'laptop-codex';
const STREAM = 'project/webapp';
const PATCH = ['--- a/README.md', '+++ b/README.md', '@@ -1 +1 @@', '-hello', '+Hello', ''].join('\n');

/** Records every Notification the page creates (the browser API, not ours), permission granted. */
const RECORD_NOTIFICATIONS = `
  window.__notices = [];
  window.Notification = class {
    constructor(title, options) { window.__notices.push({ title, body: (options && options.body) || '' }); }
    static get permission() { return 'granted'; }
    static requestPermission() { return Promise.resolve('granted'); }
  };
`;

const run = hasChromium() ? describe : describe.skip;

run('the human at the desk (Chromium)', { timeout: 120_000 }, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let mcp: Client;
  let browser: TestBrowser;
  let page: Page;
  let tools: string[];

  const list = async (args: Record<string, unknown>): Promise<LogEvent[]> =>
    (await callJson<{ events: LogEvent[] }>(mcp, 'palace_event_list', { limit: 500, ...args })).events;
  const taskRow = (id: string) => page.locator(`[data-testid="task-row"][data-task-id="${id}"]`);
  const notices = (): Promise<{ title: string; body: string }[]> => page.evaluate('window.__notices');
  const shot = async (name: string): Promise<void> => {
    await expect.poll(() => page.locator('.toast').count(), { timeout: 10_000 }).toBe(0);
    await screenshot(page, name);
  };
  const openTask = async (id: string): Promise<void> => {
    await taskRow(id).waitFor();
    if ((await taskRow(id).getAttribute('aria-selected')) !== 'true') await taskRow(id).click();
    await page.getByTestId('task-actions').waitFor();
  };

  beforeAll(async () => {
    dirs = makeHubDirs('palace-desk-');
    hub = await startTestHub(dirs, { token: TOKEN });
    mcp = await connectHttpClient(hub.url, { token: TOKEN, name: 'desk-e2e' });
    tools = (await mcp.listTools()).tools.map((t) => t.name);
    browser = await launchBrowser();
    page = browser.page;
    await page.addInitScript(RECORD_NOTIFICATIONS);
    await page.goto(`${hub.url}/ui/`);
    await page.getByTestId('token-input').fill(TOKEN);
    await page.getByTestId('token-submit').click();
    await page.getByTestId('event-table').or(page.getByTestId('events-empty')).first().waitFor();
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-chip-all').click();
  });

  afterAll(async () => {
    await browser?.close();
    await mcp?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('writes under the configured agent name and files a task request from the new-task dialog', async () => {
    await page.getByTestId('desk-agent').fill(DESK);
    await page.getByTestId('desk-agent').press('Enter');
    await page.getByTestId('desk-notify').check();
    await page.getByTestId('new-task').click();
    await page.getByTestId('new-task-title').fill('Capitalise the greeting');
    expect(await page.getByTestId('new-task-cid').inputValue()).toBe('task_capitalise_the_greeting');
    await page.getByTestId('new-task-to').fill(WORKER);
    await page.getByTestId('new-task-stream').fill(STREAM);
    await page.getByTestId('new-task-branch').fill('main');
    await page.getByTestId('new-task-base').fill('3f2a9c1');
    await page.getByTestId('new-task-body').fill('Done when README says Hello.');
    await shot('desk-01-new-task');
    await page.getByTestId('new-task-submit').click();
    await taskRow('task_capitalise_the_greeting').waitFor();
    const [request] = await list({ type: 'task.request', correlation_id: 'task_capitalise_the_greeting' });
    expect(request?.from_agent).toBe(DESK);
    expect(request?.to_agent).toBe(WORKER);
    expect(request?.status).toBe('open');
    expect(request?.base_commit).toBe('3f2a9c1');
    expect(request?.body).toBe('Capitalise the greeting\n\nDone when README says Hello.');
  });

  it('notifies (opted in) when a patch lands on a task the desk opened, then rejects it; approves another', async () => {
    const [request] = await list({ type: 'task.request', correlation_id: 'task_capitalise_the_greeting' });
    await callJson(mcp, 'palace_event_ack', { event_id: request?.id, from_agent: WORKER, status: 'claimed' });
    const first = await callJson<{ event: LogEvent }>(mcp, 'palace_patch_submit', {
      content: PATCH,
      from_agent: WORKER,
      correlation_id: 'task_capitalise_the_greeting',
      body: 'first try',
    });
    await expect
      .poll(() => taskRow('task_capitalise_the_greeting').getAttribute('data-status'))
      .toBe('ready');
    await expect
      .poll(async () => (await notices()).map((n) => n.title))
      .toContain('Patch ready on task_capitalise_the_greeting');

    await openTask('task_capitalise_the_greeting');
    await page.getByTestId('patch-decision').waitFor();
    await shot('desk-02-patch-decision');
    await page.getByTestId('patch-note').fill('the test for greet() fails');
    await page.getByTestId('patch-reject').click();
    await expect
      .poll(() => taskRow('task_capitalise_the_greeting').getAttribute('data-status'))
      .toBe('failed');
    const [rejected] = await list({
      type: 'event.ack',
      correlation_id: 'task_capitalise_the_greeting',
      status: 'failed',
    });
    expect(rejected?.from_agent).toBe(DESK);
    expect(rejected?.body).toBe('the test for greet() fails');
    expect(rejected?.metadata.ack_of).toBe(first.event.id);

    // A fresh task for the approval (a failed task is terminal).
    const again = await callJson<LogEvent>(mcp, 'palace_event_append', {
      type: 'task.request',
      stream: STREAM,
      room: 'delegation',
      from_agent: DESK,
      to_agent: WORKER,
      correlation_id: 'task_capitalise_again',
      status: 'open',
      body: 'Capitalise the greeting, with the test fixed',
    });
    await callJson(mcp, 'palace_event_ack', { event_id: again.id, from_agent: WORKER, status: 'claimed' });
    const second = await callJson<{ event: LogEvent }>(mcp, 'palace_patch_submit', {
      content: PATCH,
      from_agent: WORKER,
      correlation_id: 'task_capitalise_again',
      body: 'second try',
    });
    await expect.poll(() => taskRow('task_capitalise_again').getAttribute('data-status')).toBe('ready');
    await openTask('task_capitalise_again');
    await page.getByTestId('patch-approve').click();
    await expect.poll(() => taskRow('task_capitalise_again').getAttribute('data-status')).toBe('applied');
    const [applied] = await list({
      type: 'event.ack',
      correlation_id: 'task_capitalise_again',
      status: 'applied',
    });
    expect(applied?.from_agent).toBe(DESK);
    expect(applied?.metadata.ack_of).toBe(second.event.id);
  });

  it('replies on a task, and notifies when a task is addressed to the desk', async () => {
    await callJson(mcp, 'palace_event_append', {
      type: 'task.request',
      stream: STREAM,
      room: 'delegation',
      from_agent: WORKER,
      to_agent: DESK,
      correlation_id: 'task_review_wording',
      status: 'open',
      body: 'Please review the wording of the login error.',
    });
    await expect
      .poll(async () => (await notices()).map((n) => n.title))
      .toContain(`Task for you from ${WORKER}`);
    await openTask('task_review_wording');
    await page.getByTestId('task-reply').fill('Looks fine; ship it.');
    await page.getByTestId('task-reply-send').click();
    await expect
      .poll(async () => (await list({ type: 'task.reply', correlation_id: 'task_review_wording' })).length)
      .toBe(1);
    const [reply] = await list({ type: 'task.reply', correlation_id: 'task_review_wording' });
    expect(reply?.from_agent).toBe(DESK);
    expect(reply?.to_agent).toBe(WORKER);
    expect(reply?.body).toBe('Looks fine; ship it.');
  });

  it('files a task with a dependency, then releases its claim and cancels its reservation', async () => {
    await page.getByTestId('new-task').click();
    await page.getByTestId('new-task-title').fill('Stale claim');
    await page.getByTestId('new-task-cid').fill('task_stale_claim');
    await page.getByTestId('new-task-to').fill(WORKER);
    await page.getByTestId('new-task-stream').fill(STREAM);
    await page.getByTestId('new-task-deps').fill('task_review_wording');
    await page.getByTestId('new-task-body').fill('A task whose worker went away.');
    await page.getByTestId('new-task-submit').click();
    await taskRow('task_stale_claim').waitFor();
    const [request] = await list({ type: 'task.request', correlation_id: 'task_stale_claim' });
    if (!request) throw new Error('the dialog filed no request');
    expect(request.metadata.depends_on).toEqual(['task_review_wording']);
    await callJson(mcp, 'palace_event_ack', { event_id: request.id, from_agent: WORKER, status: 'claimed' });
    // Through palace_reserve (a raw file.reserved append is refused since issue 28: event.hub_only).
    const { event: reservation } = await callJson<{ event: LogEvent }>(mcp, 'palace_reserve', {
      paths: ['src/auth/**'],
      stream: STREAM,
      from_agent: WORKER,
      exclusive: true,
      ttl_ms: 3_600_000,
      correlation_id: 'task_stale_claim',
    });
    await expect.poll(() => taskRow('task_stale_claim').getAttribute('data-status')).toBe('claimed');
    await openTask('task_stale_claim');
    await page.locator(`[data-reservation-id="${reservation.id}"]`).waitFor();
    if (tools.includes('palace_task_ready')) {
      // With the leases and dependencies of the projection (helper coord): lease time left, blocked-by.
      await expect.poll(() => page.getByTestId('task-lease').innerText()).toMatch(/left/);
      await expect.poll(() => page.getByTestId('task-deps').innerText()).toContain('task_review_wording');
    }
    await shot('desk-03-claim-and-reservation');

    await page.getByTestId('claim-release').click();
    if (tools.includes('palace_task_release')) {
      await expect.poll(() => taskRow('task_stale_claim').getAttribute('data-status')).toBe('open');
      const [expired] = await list({ type: 'claim.expired', correlation_id: 'task_stale_claim' });
      expect(expired?.from_agent).toBe(DESK);
      // The desk (the hub-token holder) may release the worker's live claim; the event says who did.
      expect(JSON.parse(expired?.body ?? '{}')).toMatchObject({ released_by: DESK, worker: WORKER });
    } else {
      // The tool comes with the leases work (helper coord); until then the hub's refusal is shown.
      await expect.poll(() => page.getByTestId('desk-error').innerText()).toContain('palace_task_release');
    }

    await page.locator(`[data-reservation-id="${reservation.id}"]`).getByTestId('reservation-cancel').click();
    if (tools.includes('palace_release')) {
      await expect.poll(() => page.locator(`[data-reservation-id="${reservation.id}"]`).count()).toBe(0);
      const [released] = await list({ type: 'file.released' });
      expect(released?.from_agent).toBe(DESK);
    } else {
      await expect.poll(() => page.getByTestId('desk-error').innerText()).toContain('palace_release');
    }
  });

  it('shows the registered agents and marks writes under unproven names; a registered name needs its secret', async () => {
    const { createAgentRegistry } = await import('../../hub/src/identity/agent-registry.js');
    const { secret } = createAgentRegistry(dirs.palace).add('box-reviewer', { capabilities: ['review'], harness: 'claude-code' });
    const agent = await connectHttpClient(hub.url, { token: secret, name: 'desk-e2e-agent' });
    try {
      const proven = await callJson<LogEvent>(agent, 'palace_event_append', { type: 'status', stream: STREAM, room: 'status', to_agent: '*', body: 'reviewing' });
      expect(proven.from_agent).toBe('box-reviewer');
      const unproven = await callJson<LogEvent>(mcp, 'palace_event_append', { type: 'status', stream: STREAM, room: 'status', from_agent: 'stranger-bot', to_agent: '*', body: 'hello' });
      // The hub token cannot write as the registered agent.
      const refused = await mcp.callTool({ name: 'palace_event_append', arguments: { type: 'status', stream: STREAM, room: 'status', from_agent: 'box-reviewer', body: 'x' } });
      expect(JSON.stringify(refused.content)).toContain('identity.unproven');
      await page.getByTestId('nav-events').click();
      await page.getByTestId('event-table').waitFor();
      const row = (id: string) => page.locator(`[data-testid="event-row"][data-event-id="${id}"]`);
      await expect.poll(() => row(unproven.id).getByTestId('unproven').count(), { timeout: 15_000 }).toBe(1);
      expect(await row(proven.id).getByTestId('unproven').count()).toBe(0);
      await shot('desk-05-unproven');
      await page.getByTestId('nav-status').click();
      await expect.poll(() => page.getByTestId('agents-card').innerText(), { timeout: 15_000 }).toMatch(/box-reviewer[\s\S]*active · review · claude-code/);
      expect(await page.getByTestId('agents-card').innerText()).toMatch(/open: unregistered names are believed/);
    } finally {
      await agent.close();
    }
  });
});

run('the desk on a read-only hub (Chromium)', { timeout: 60_000 }, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let browser: TestBrowser;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-desk-ro-');
    const log = Logstream.open(dirs.palace);
    try {
      const request = log.appendNow({
        type: 'task.request',
        stream: STREAM,
        room: 'delegation',
        from_agent: DESK,
        to_agent: WORKER,
        correlation_id: 'task_read_only',
        status: 'open',
        body: 'A task on a read-only hub.',
      });
      log.ack({ event_id: request.id, from_agent: WORKER, status: 'claimed' });
      log.submitPatch({ correlation_id: 'task_read_only', from_agent: WORKER, content: PATCH });
    } finally {
      log.close();
    }
    hub = await startTestHub(dirs, { readOnly: true });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('shows the hub refusing each write and appends nothing', async () => {
    const page = browser.page;
    await page.goto(`${hub.url}/ui/`);
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('task-chip-all').click();
    await page.locator('[data-testid="task-row"][data-task-id="task_read_only"]').click();
    await page.getByTestId('patch-approve').click();
    await expect.poll(() => page.getByTestId('desk-error').innerText()).toMatch(/read-only/);
    await screenshot(page, 'desk-04-read-only');
    await page.getByTestId('new-task').click();
    await page.getByTestId('new-task-title').fill('Anything');
    await page.getByTestId('new-task-to').fill(WORKER);
    await page.getByTestId('new-task-stream').fill(STREAM);
    await page.getByTestId('new-task-submit').click();
    await expect.poll(() => page.getByTestId('new-task-error').innerText()).toMatch(/read-only/);
    expect(hub.services.logstream.store.countEvents()).toBe(3);
  });
});
