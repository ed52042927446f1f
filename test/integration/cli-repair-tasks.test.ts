// `palace repair --tasks` as a real child process: it checks the task projection against a full scan
// of the log (exit 0 when equal), names every difference after the table was damaged (exit 1), and
// `--mode rebuild` builds it again from the log; the same for the reservations table and the two
// routing tables (event-routes.ts).

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { LOGSTREAM_FILE } from '../../hub/src/logstream/logstream.js';
import { appendEvent, makeTempPalace, parseJson, type TempPalace } from '../helpers/cli.js';

interface RepairJson {
  mode: string;
  tasks: number;
  ok: boolean;
  differences: Array<{ correlation_id: string; problem: string }>;
}

let palace: TempPalace;
beforeEach(() => {
  palace = makeTempPalace();
});
afterEach(async () => {
  await palace.cleanup();
});

describe('palace repair --tasks', () => {
  it('checks the projection, reports damage and rebuilds it', async () => {
    for (const corr of ['task_r1', 'task_r2', 'task_r3'])
      await appendEvent(palace, { type: 'task.request', from: 'lead', to: 'w', correlationId: corr, status: 'open' });
    await appendEvent(palace, { type: 'task.reply', from: 'w', to: 'lead', correlationId: 'task_r2', status: 'failed' });

    const clean = await palace.run(['repair', '--tasks', '--json']);
    expect(clean.code).toBe(0);
    expect(parseJson<RepairJson>(clean)).toMatchObject({ mode: 'check', tasks: 3, ok: true, differences: [] });

    const db = new Database(join(palace.dir, LOGSTREAM_FILE));
    db.prepare(`UPDATE tasks SET state_json = '{}' WHERE correlation_id = 'task_r2'`).run();
    db.prepare(`DELETE FROM tasks WHERE correlation_id = 'task_r3'`).run();
    db.prepare(`INSERT INTO tasks (correlation_id, first_seq, last_seq, done, stream, state_json) VALUES ('task_ghost', 99, 99, 0, 'x', '{}')`).run();
    db.close();

    const damaged = await palace.run(['repair', '--tasks', '--json']);
    expect(damaged.code).toBe(1);
    expect(parseJson<RepairJson>(damaged).differences).toEqual([
      { correlation_id: 'task_r2', problem: 'different' },
      { correlation_id: 'task_r3', problem: 'missing' },
      { correlation_id: 'task_ghost', problem: 'extra' },
    ]);
    // The kept counts no longer match the damaged rows either (the ghost, the lost open task).
    expect(parseJson<RepairJson & { count_drift: string[] }>(damaged).count_drift.length).toBeGreaterThan(0);
    const text = await palace.run(['repair', '--tasks']);
    expect(text.stdout).toContain('3 difference(s)');

    const rebuilt = await palace.run(['repair', '--tasks', '--mode', 'rebuild', '--json']);
    expect(rebuilt.code).toBe(0);
    expect(parseJson<RepairJson>(rebuilt)).toMatchObject({ mode: 'rebuild', tasks: 3, ok: true, count_drift: [] });
    const tasks = parseJson<{ tasks: Array<{ correlation_id: string; status: string }> }>(await palace.run(['logstream', 'tasks', '--json']));
    expect(tasks.tasks.map((t) => [t.correlation_id, t.status])).toEqual([
      ['task_r1', 'open'],
      ['task_r2', 'failed'],
      ['task_r3', 'open'],
    ]);
  });

  it('checks the reservations table too: names a lost, a changed and a stray reservation, and rebuilds it', async () => {
    const reserve = async (path: string, agent: string): Promise<string> => {
      const r = await palace.run(['reserve', path, '--stream', 'project/r', '--from-agent', agent, '--exclusive', '--ttl', '2h', '--json']);
      expect(r.code, r.stderr).toBe(0);
      return parseJson<{ reservation: { reservation_id: string } }>(r).reservation.reservation_id;
    };
    const kept = await reserve('src/a.ts', 'w1');
    const changed = await reserve('src/b.ts', 'w2');
    const released = await reserve('src/c.ts', 'w3');
    expect((await palace.run(['release', released, '--from-agent', 'w3'])).code).toBe(0);

    const clean = await palace.run(['repair', '--tasks', '--json']);
    expect(clean.code).toBe(0);
    expect(parseJson<RepairJson & { reservations: unknown }>(clean).reservations).toEqual({ held: 2, differences: [] });

    const db = new Database(join(palace.dir, LOGSTREAM_FILE));
    db.prepare('DELETE FROM reservations WHERE reservation_id = ?').run(kept);
    db.prepare(`UPDATE reservations SET expires_at = '2099-01-01T00:00:00.000Z' WHERE reservation_id = ?`).run(changed);
    db.prepare(
      `INSERT INTO reservations (reservation_id, seq, stream, agent, correlation_id, paths_json, exclusive, expires_at, created_at)
       VALUES (?, 1, 'project/r', 'w3', NULL, '["src/c.ts"]', 1, '2099-01-01T00:00:00.000Z', '2026-01-01T00:00:00Z')`,
    ).run(released);
    db.close();
    // The damaged table is what reads see: the lost reservation no longer conflicts.
    const list = parseJson<{ reservations: Array<{ reservation_id: string }> }>(await palace.run(['reservations', '--json']));
    expect(list.reservations.map((r) => r.reservation_id).sort()).toEqual([changed, released].sort());

    const damaged = await palace.run(['repair', '--tasks', '--json']);
    expect(damaged.code).toBe(1);
    expect(parseJson<RepairJson & { reservations: { differences: unknown[] } }>(damaged).reservations.differences).toEqual([
      { reservation_id: kept, problem: 'missing' },
      { reservation_id: changed, problem: 'different' },
      { reservation_id: released, problem: 'extra' },
    ]);
    expect((await palace.run(['repair', '--tasks'])).stdout).toContain('reservations 3 difference(s)');

    const rebuilt = await palace.run(['repair', '--tasks', '--mode', 'rebuild', '--json']);
    expect(rebuilt.code).toBe(0);
    expect(parseJson<RepairJson & { reservations: unknown }>(rebuilt).reservations).toEqual({ held: 2, differences: [] });
    const after = parseJson<{ reservations: Array<{ reservation_id: string }> }>(await palace.run(['reservations', '--json']));
    expect(after.reservations.map((r) => r.reservation_id)).toEqual([kept, changed]);
  });

  it('checks the routing tables too: names a lost and a stray row, and rebuilds them', async () => {
    for (const corr of ['task_q1', 'task_q2'])
      await appendEvent(palace, { type: 'task.request', from: 'lead', to: 'w', correlationId: corr, status: 'open' });
    await appendEvent(palace, { type: 'task.reply', from: 'w', to: 'lead', correlationId: 'task_q1', status: 'failed' });
    const clean = await palace.run(['repair', '--tasks', '--json']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(parseJson<RepairJson & { routes: unknown }>(clean).routes).toEqual({ missing: 0, extra: 0, differences: [] });

    const file = join(palace.dir, LOGSTREAM_FILE);
    const db = new Database(file);
    const lost = db.prepare(`SELECT seq FROM events WHERE to_agent = 'lead'`).pluck().get() as number;
    db.prepare(`DELETE FROM event_routes_agent WHERE to_agent = 'lead' AND seq = ?`).run(lost);
    db.prepare(`INSERT INTO event_routes_task (correlation_id, seq) VALUES ('task_q2', 1)`).run(); // seq 1 is task_q1's
    db.close();

    const damaged = await palace.run(['repair', '--tasks', '--json']);
    expect(damaged.code).toBe(1);
    expect(parseJson<RepairJson & { routes: unknown }>(damaged).routes).toEqual({
      missing: 1,
      extra: 1,
      differences: [
        { route: 'to_agent', value: 'lead', seq: lost, problem: 'missing' },
        { route: 'correlation_id', value: 'task_q2', seq: 1, problem: 'extra' },
      ],
    });
    expect((await palace.run(['repair', '--tasks'])).stdout).toContain('routes    1 row(s) missing, 1 extra');

    const rebuilt = await palace.run(['repair', '--tasks', '--mode', 'rebuild', '--json']);
    expect(rebuilt.code).toBe(0);
    expect(parseJson<RepairJson & { routes: unknown }>(rebuilt).routes).toEqual({ missing: 0, extra: 0, differences: [] });
    const check = new Database(file, { readonly: true });
    try {
      for (const [table, column] of [
        ['event_routes_agent', 'to_agent'],
        ['event_routes_task', 'correlation_id'],
      ])
        expect(check.prepare(`SELECT ${column}, seq FROM ${table} ORDER BY 1, 2`).all()).toEqual(
          check.prepare(`SELECT ${column}, seq FROM events WHERE ${column} IS NOT NULL ORDER BY 1, 2`).all(),
        );
    } finally {
      check.close();
    }
  });
});
