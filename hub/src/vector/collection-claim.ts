// One hub per networked collection, for backends without transactions (Qdrant, Milvus): a claim
// record (holder, host, pid, heartbeat) kept by the adapter; a live claim of another holder refuses.

import { hostname } from 'node:os';

import { HubError } from '../errors.js';

/** A claim whose heartbeat is older than this is taken over (its holder died without releasing it). */
export const CLAIM_STALE_MS = 60_000;
const HEARTBEAT_MS = 15_000;

export interface ClaimRecord {
  holder: string;
  host: string;
  pid: number;
  /** Epoch milliseconds of the last heartbeat. */
  heartbeat: number;
}

/** How one backend stores the claim record of one collection. */
export interface ClaimIo {
  read(): Promise<ClaimRecord | undefined>;
  write(record: ClaimRecord): Promise<void>;
  remove(): Promise<void>;
}

export interface HeldClaim {
  /** Stops the heartbeat and removes the claim if it is still ours. */
  release(): Promise<void>;
}

function refusal(collection: string, where: string, held: ClaimRecord): HubError {
  return new HubError(
    'lease.held',
    `the backend collection ${collection} at ${where} is served by another hub (${held.holder} on ${held.host}, pid ${held.pid}); ` +
      'stop that hub or use another PALACE_BACKEND_NAMESPACE',
    { data: { collection, holder: held.holder, host: held.host, pid: held.pid } },
  );
}

/**
 * Claims `collection` for `holder`, or throws `lease.held` naming the live holder. Without a
 * compare-and-set on these servers, the claim is written and then read back: of two hubs
 * starting in the same instant, the one whose write landed last wins and the other refuses.
 */
export async function takeClaim(io: ClaimIo, input: { collection: string; holder: string; where: string; now?: () => number }): Promise<HeldClaim> {
  const now = input.now ?? Date.now;
  const current = await io.read();
  if (current && current.holder !== input.holder && now() - current.heartbeat < CLAIM_STALE_MS) throw refusal(input.collection, input.where, current);
  const mine: ClaimRecord = { holder: input.holder, host: hostname(), pid: process.pid, heartbeat: now() };
  await io.write(mine);
  const after = await io.read();
  if (after && after.holder !== input.holder) throw refusal(input.collection, input.where, after);
  const timer = setInterval(() => {
    io.write({ ...mine, heartbeat: now() }).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      const held = await io.read().catch(() => undefined);
      if (held?.holder === input.holder) await io.remove().catch(() => undefined);
    },
  };
}
