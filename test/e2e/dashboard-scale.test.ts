// The dashboard on a log bigger than any window of recent events: 3,000 tasks (9,000 task events,
// filled through the store's batch append of a real hub on port 0) in Chromium. The Tasks view, its
// chips and the sidebar badge show the hub's true totals (stalled included: 240 tasks claimed an hour
// ago, more than a page), the task list pages from the hub, and the Events view reads older pages from
// the hub on "load older".

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { NewEvent } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { hasChromium, launchBrowser, screenshot, type TestBrowser } from '../helpers/browser.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const TASKS = 3_000;
/** Tasks claimed an hour ago with nothing since: stalled, more of them than one page (100) holds. */
const STALLED = 240;
/** Correlation ids with only a status note (no task yet), oldest of all: not task rows, never counted. */
const NOTES = 3;
const run = hasChromium() ? describe : describe.skip;

run('dashboard at scale (Chromium)', { timeout: 90_000 }, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let browser: TestBrowser;
  let page: Page;
  let active = 0;
  let failed = 0;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-e2e-scale-');
    hub = await startTestHub(dirs);
    const ls = hub.services.logstream;
    const batch: NewEvent[] = [];
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19) + 'Z';
    for (let i = 0; i < NOTES; i++)
      batch.push(ls.prepareEvent({ stream: 'project/scale', room: 'status', correlation_id: `note_${i}`, type: 'status', from_agent: 'lead', to_agent: '*', body: 'planning' }));
    for (let i = 0; i < STALLED; i++) {
      const base = { stream: 'project/scale', room: 'delegation', correlation_id: `task_quiet_${String(i).padStart(4, '0')}` };
      batch.push({ ...ls.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker', body: `Quiet task ${i}` }), created_at: hourAgo });
      batch.push({ ...ls.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead' }), created_at: hourAgo });
      active++;
    }
    for (let i = 0; i < TASKS; i++) {
      const base = { stream: 'project/scale', room: 'delegation', correlation_id: `task_scale_${String(i).padStart(4, '0')}` };
      batch.push(ls.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker', body: `Task number ${i}` }));
      batch.push(ls.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead' }));
      if (i % 4 === 0) {
        batch.push(ls.prepareEvent({ ...base, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' }));
        failed++;
      } else {
        batch.push(ls.prepareEvent({ ...base, type: 'status', from_agent: 'worker', to_agent: '*', body: 'working' }));
        active++;
      }
    }
    ls.store.append(batch);
    browser = await launchBrowser();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  const chipCount = async (key: string): Promise<string> =>
    (await page.getByTestId(`task-chip-${key}`).locator('.chip-count').innerText()).trim();

  it('shows the true task totals, and pages the list from the hub', async () => {
    await page.goto(`${hub.url}/ui/#/tasks`);
    await page.getByTestId('task-table').waitFor();
    await expect.poll(() => chipCount('all'), { timeout: 20_000 }).toBe(String(TASKS + STALLED));
    expect(await chipCount('active')).toBe(String(active));
    expect(await chipCount('failed')).toBe(String(failed));
    // Stalled: the hub's count over the whole log, not among the rows loaded so far; so is the badge.
    await expect.poll(() => chipCount('stalled')).toBe(String(STALLED));
    expect((await page.getByTestId('nav-tasks').locator('.nav-count').innerText()).trim()).toBe(String(STALLED));

    // A page, not the whole log, is in the table; "load more" fetches the next one.
    const rows = page.getByTestId('task-row');
    const first = await rows.count();
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(active);
    // A full page of task rows: the correlation ids with only a note are not on it (nor in the total).
    expect(first).toBe(100);
    expect(await page.getByTestId('tasks-shown').innerText()).toBe(`100 shown of ${active.toLocaleString('en-US')}`);
    await page.getByTestId('tasks-more').click();
    await expect.poll(() => rows.count()).toBeGreaterThan(first);

    await page.getByTestId('task-chip-failed').click();
    await expect.poll(async () => (await rows.first().getAttribute('data-status')) ?? '').toBe('failed');
    expect(await page.getByTestId('tasks-shown').innerText()).toContain(`of ${failed}`);
    await screenshot(page, 'scale-tasks');
  });

  it('lists the stalled tasks page by page from the hub', async () => {
    await page.getByTestId('task-chip-stalled').click();
    const rows = page.getByTestId('task-row');
    await expect.poll(() => page.getByTestId('tasks-shown').innerText()).toBe(`100 shown of ${STALLED}`);
    expect(await rows.count()).toBe(100);
    for (const stalled of await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-stalled')))) expect(stalled).toBe('true');
    await page.getByTestId('tasks-more').click();
    await expect.poll(() => rows.count()).toBe(200);
    expect(await chipCount('stalled')).toBe(String(STALLED));
  });

  it('still lists tasks when the hub cannot count stalled ones (a hub older than last_event_before)', async () => {
    await page.route('**/mcp', async (route) => {
      const body = route.request().postData() ?? '';
      if (!body.includes('last_event_before')) return route.fallback();
      const id = (JSON.parse(body) as { id?: unknown }).id ?? null;
      await route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid arguments for tool palace_tasks' } }),
      });
    });
    try {
      await page.goto(`${hub.url}/ui/#/tasks`);
      await page.reload();
      await expect.poll(() => chipCount('all'), { timeout: 20_000 }).toBe(String(TASKS + STALLED));
      expect(await page.getByTestId('task-chip-stalled').count()).toBe(0);
      expect((await page.getByTestId('nav-tasks').locator('.nav-count').innerText()).trim()).toBe(String(active));
    } finally {
      await page.unroute('**/mcp');
    }
  });

  it('pages older events in from the hub', async () => {
    await page.getByTestId('nav-events').click();
    await page.getByTestId('event-table').waitFor();
    const count = async (): Promise<number> => Number(/([\d,]+) events/.exec(await page.getByTestId('event-count').innerText())?.[1]?.replace(/,/g, '') ?? 0);
    await expect.poll(count).toBe(500);
    expect(await page.getByTestId('event-count').innerText()).toContain(`of ${(TASKS * 3 + STALLED * 2 + NOTES).toLocaleString('en-US')} in the log`);
    expect(await page.getByTestId('event-row').count()).toBe(400);
    // Each click shows 400 more rows, reading the next page from the hub when the loaded ones run out.
    await page.getByTestId('events-older').click();
    await expect.poll(count).toBe(1_000);
    await expect.poll(() => page.getByTestId('event-row').count()).toBe(800);
    await page.getByTestId('events-older').click();
    await expect.poll(count).toBe(1_500);
    await expect.poll(() => page.getByTestId('event-row').count()).toBe(1_200);
  });
});
