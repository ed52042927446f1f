// Background mines inside a hub (the save hooks hand a transcript over and return at once): one
// queue per hub, run one after another, with the last few outcomes kept for `palace_mined`.

import { randomBytes } from 'node:crypto';

import { toHubError } from '../errors.js';
import type { HubServices } from '../services.js';
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

interface Queue {
  tail: Promise<void>;
  jobs: MineJob[];
}

const KEEP = 50;
const queues = new WeakMap<HubServices, Queue>();

function queueOf(hub: HubServices): Queue {
  let q = queues.get(hub);
  if (!q) {
    q = { tail: Promise.resolve(), jobs: [] };
    queues.set(hub, q);
  }
  return q;
}

/** Queues a mine and returns its job record at once. */
export function startMineJob(hub: HubServices, source: string, run: () => Promise<MineReport>): MineJob {
  const q = queueOf(hub);
  const job: MineJob = { id: `mine_${randomBytes(6).toString('hex')}`, source, state: 'queued', queued_at: new Date().toISOString() };
  q.jobs.push(job);
  if (q.jobs.length > KEEP) q.jobs.splice(0, q.jobs.length - KEEP);
  q.tail = q.tail.then(async () => {
    job.state = 'running';
    try {
      job.report = await run();
      job.state = 'done';
    } catch (err) {
      const e = toHubError(err);
      job.error = { code: e.code, message: e.message };
      job.state = 'failed';
      hub.log.warn('background mine failed', { source, code: e.code, message: e.message });
    }
    job.finished_at = new Date().toISOString();
  });
  return { ...job };
}

/** Recent background mines of this hub, newest last. */
export function mineJobs(hub: HubServices): MineJob[] {
  return queueOf(hub).jobs.map((j) => ({ ...j }));
}
