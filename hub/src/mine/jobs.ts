// Background mines inside a hub (the save hooks hand a transcript over and return at once): one
// queue per palace (held by its services), run one after another, the last few outcomes kept for
// `palace_mined`.

import { randomBytes } from 'node:crypto';

import { toHubError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MineReport } from './miner.js';

export interface MineJob {
  id: string;
  source: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  queued_at: string;
  finished_at?: string;
  report?: MineReport;
  error?: { code: string; message: string };
}

const KEEP = 50;

/** One process's queue of background mines: run one after another, the last KEEP kept. */
export class MineJobs {
  private tail: Promise<void> = Promise.resolve();
  private readonly jobs: MineJob[] = [];

  constructor(private readonly log: Logger) {}

  /** Queues a mine and returns its job record at once. */
  start(source: string, run: () => Promise<MineReport>): MineJob {
    const job: MineJob = { id: `mine_${randomBytes(6).toString('hex')}`, source, state: 'queued', queued_at: new Date().toISOString() };
    this.jobs.push(job);
    if (this.jobs.length > KEEP) this.jobs.splice(0, this.jobs.length - KEEP);
    this.tail = this.tail.then(async () => {
      job.state = 'running';
      try {
        job.report = await run();
        job.state = 'done';
      } catch (err) {
        const e = toHubError(err);
        job.error = { code: e.code, message: e.message };
        job.state = 'failed';
        this.log.warn('background mine failed', { source, code: e.code, message: e.message });
      }
      job.finished_at = new Date().toISOString();
    });
    return { ...job };
  }

  /** Recent background mines, newest last. */
  list(): MineJob[] {
    return this.jobs.map((j) => ({ ...j }));
  }
}
