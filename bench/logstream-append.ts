// Logstream append throughput: one transaction per event (appendNow) and 16 concurrent appenders
// through the group-committing append(), against bare better-sqlite3 on a plain table (and, for
// context, on the palace schema). Measured and reference runs alternate in rounds to share drift.

import { Logstream, type AppendInput } from '../hub/src/logstream/logstream.js';
import { BareDb, bareRows } from './bare-sqlite.js';
import { concurrentTraffic, ownTasks, trafficBatch } from './event-fixtures.js';
import type { Figure, SuiteContext } from './figure.js';
import { perSecond } from './stats.js';

const OWN_TXN_EVENTS = 20_000;
const APPENDERS = 16;
const PER_APPENDER = 2_000;
const ROUNDS = 4;
const WARM = 200;

interface Throughput {
  palace: number;
  plain: number;
  schema: number;
}

function timed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

function chunks<T>(items: readonly T[], count: number): T[][] {
  const size = Math.ceil(items.length / count);
  return Array.from({ length: count }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** `APPENDERS` async loops, each awaiting append() in sequence over its share of `inputs`. */
async function appendConcurrently(log: Logstream, inputs: readonly AppendInput[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: APPENDERS }, async (_, loop) => {
      for (let i = loop; i < inputs.length; i += APPENDERS) await log.append(inputs[i] ?? {});
    }),
  );
  log.store.tasks.catchUp(); // the task projection of the last events, inside the timed region
  return performance.now() - t0;
}

/**
 * Events/s through the palace (one call per event, `perTransaction` appends per commit) and through
 * bare INSERTs of the same rows with the same rows per transaction, alternating in rounds.
 */
async function measure(
  tempDir: (name: string) => string,
  name: string,
  inputs: readonly AppendInput[],
  perTransaction: number,
): Promise<Throughput> {
  const log = Logstream.open(tempDir(`${name}-palace`));
  const plain = new BareDb(tempDir(`${name}-plain`), 'plain');
  const schema = new BareDb(tempDir(`${name}-schema`), 'palace');
  const appendAll = async (batch: readonly AppendInput[]): Promise<number> =>
    perTransaction === 1
      ? timed(() => {
          batch.forEach((input) => log.appendNow(input));
          log.store.tasks.catchUp(); // the task projection of the last events, inside the timed region
        })
      : appendConcurrently(log, batch);
  try {
    // The warm-up appends tasks of its own: replaying the first events' acks later would skip the task order.
    const warm = ownTasks(inputs.slice(0, WARM), 'warm');
    await appendAll(warm);
    plain.insertRows(bareRows(warm, 1e9), perTransaction);
    schema.insertRows(bareRows(warm, 1e9), perTransaction);
    const ms = { palace: 0, plain: 0, schema: 0 };
    let seq = 1;
    for (const batch of chunks(inputs, ROUNDS)) {
      const rows = bareRows(batch, seq);
      seq += batch.length;
      ms.palace += await appendAll(batch);
      ms.plain += timed(() => plain.insertRows(rows, perTransaction));
      ms.schema += timed(() => schema.insertRows(rows, perTransaction));
    }
    return {
      palace: perSecond(inputs.length, ms.palace),
      plain: perSecond(inputs.length, ms.plain),
      schema: perSecond(inputs.length, ms.schema),
    };
  } finally {
    log.close();
    plain.close();
    schema.close();
  }
}

function note(what: string, t: Throughput): string {
  return (
    `${what}: a raw INSERT of the same rows into the palace schema (all its indexes) does` +
    ` ${Math.round(t.schema).toLocaleString('en-US')} events/s, vs ${Math.round(t.plain).toLocaleString('en-US')}` +
    ` on the plain table and ${Math.round(t.palace).toLocaleString('en-US')} through the logstream.`
  );
}

export async function appendFigures(
  ctx: SuiteContext,
  tempDir: (name: string) => string,
): Promise<{ figures: Figure[]; notes: string[] }> {
  ctx.progress(`append: ${OWN_TXN_EVENTS} events, one transaction each (appendNow), ${ROUNDS} rounds`);
  const own = await measure(tempDir, 'own-txn', trafficBatch(OWN_TXN_EVENTS, 1), 1);
  ctx.progress(
    `append: ${APPENDERS} concurrent appenders x ${PER_APPENDER} events (group commit), ${ROUNDS} rounds`,
  );
  const group = await measure(tempDir, 'group', concurrentTraffic(APPENDERS, PER_APPENDER, 2), APPENDERS);
  return {
    figures: [
      {
        name: 'append, own transaction each (appendNow)',
        value: own.palace,
        unit: 'events/s',
        reference: {
          value: own.plain,
          label: 'bare better-sqlite3 INSERT, plain table, 1 row/txn',
          measured: true,
        },
        target: { op: '>=', value: 5_000 },
      },
      {
        name: `append, ${APPENDERS} concurrent appenders (group commit)`,
        value: group.palace,
        unit: 'events/s',
        reference: {
          value: group.plain,
          label: `bare better-sqlite3 INSERT, plain table, ${APPENDERS} rows/txn`,
          measured: true,
        },
        target: { op: '>=', value: 20_000 },
      },
    ],
    notes: [
      `Appends: ${OWN_TXN_EVENTS.toLocaleString('en-US')} events one per transaction, and` +
        ` ${(APPENDERS * PER_APPENDER).toLocaleString('en-US')} from ${APPENDERS} loops (commits of up to ${APPENDERS});` +
        ` ~200-byte bodies; palace and bare runs alternate in ${ROUNDS} rounds on fresh files.` +
        ' Each timed palace round ends with the task projection caught up (events it left pending are projected inside the timer).',
      note('1 row/txn', own),
      note(`${APPENDERS} rows/txn`, group),
    ],
  };
}
