// The `logstream` benchmark suite: append throughput, list latency, wake-up latency and artifact
// puts through the real Logstream and SqliteEventStore, in temp dirs that are always removed.

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { LOGSTREAM_FILE, Logstream } from '../hub/src/logstream/logstream.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { appendFigures } from './logstream-append.js';
import { artifactFigures } from './logstream-artifact.js';
import { coordinationFigures } from './logstream-coord.js';
import { LIST_SIZES, listFigures, listSamples } from './logstream-list.js';
import { wakeFigures } from './logstream-wake.js';
import { writeFigures } from './logstream-write.js';
import { watchWakeFigures } from './logstream-watch.js';

function sqliteVersion(): string {
  const db = new Database(':memory:');
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const root = mkdtempSync(join(tmpdir(), 'palace-bench-'));
  const tempDir = (name: string): string => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  try {
    const appends = await appendFigures(ctx, tempDir);
    const figures: Figure[] = [...appends.figures];
    const notes: string[] = [...appends.notes];
    const writes = await writeFigures(ctx, tempDir);
    figures.push(...writes.figures);
    notes.push(...writes.notes);

    const palaceDir = tempDir('list');
    const log = Logstream.open(palaceDir);
    try {
      const { samples, matchesPerQuery } = await listSamples(ctx, log, join(palaceDir, LOGSTREAM_FILE));
      figures.push(...listFigures(samples));
      notes.push(
        `list: ${LIST_SIZES.map((n) => n.toLocaleString('en-US')).join(' and ')} events from ~20 agents` +
          ' (75% addressed, 10% broadcast, 15% unaddressed); each query rotates to_agent over the 20 agents;' +
          ` the near-tip query returns ~${matchesPerQuery} events, the far-back one a full page of 50.` +
          ' Python reference (DESIGN.md): p50 1.2-1.4 ms at 100k, growing with the log.',
      );
      const wake = await wakeFigures(ctx, log, palaceDir);
      figures.push(...wake.figures);
      notes.push('Wake-ups run on the 100k-event palace.', ...wake.notes);
      figures.push(...(await watchWakeFigures(ctx, log, palaceDir, tempDir('watch'))));
      notes.push(
        '`logstream watch`: the real CLI (`node bin/palace.js`, no hub) follows the 100k-event palace; this process appends after a random 0-100 ms pause and times until the watcher prints the batch (NDJSON) on its stdout.',
      );
      const coordination = coordinationFigures(ctx, log);
      figures.push(...coordination.figures);
      notes.push(...coordination.notes);
    } finally {
      log.close();
    }

    figures.push(...artifactFigures(ctx, tempDir('artifact'), tempDir('bare-artifact')));
    notes.push(
      'Artifact: 50 distinct 1 MiB ASCII texts (kind "file"), 5 warm-up puts not counted; no target in' +
        ' DESIGN.md; Python reference 5.2 ms.',
      `Durability "normal": WAL + synchronous=NORMAL (the default); SQLite ${sqliteVersion()}. An acknowledged event survives kill -9 of the process (test/reliability/crash-consistency.test.ts); on power loss or an OS crash the last commits since the WAL was last synced can be lost, never half-written. PALACE_LOG_DURABILITY=full syncs every commit (README "Durability").`,
    );
    return { figures, notes };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export const logstreamSuite: Suite = {
  name: 'logstream',
  title: 'Logstream (hub/src/logstream)',
  run,
};
