// Realistic, deterministic logstream traffic for the benchmarks: ~20 agents delegating tasks,
// claiming, acking, broadcasting and shipping patches, with ~200-byte bodies. No I/O.

import type { AppendInput } from '../hub/src/logstream/logstream.js';
import { pick, seededRandom } from './stats.js';

export const AGENTS: readonly string[] = [
  'claude-api',
  'claude-web',
  'claude-infra',
  'claude-docs',
  'codex-1',
  'codex-2',
  'codex-3',
  'cursor-ui',
  'cursor-tests',
  'gemini-review',
  'aider-migrations',
  'reviewer',
  'planner',
  'release-bot',
  'ci-watcher',
  'security-scan',
  'perf-agent',
  'data-agent',
  'alice',
  'bob',
];

const WORDS =
  'refactor the session store so that expired tokens are purged on read and add a regression test for the race between logout and refresh then update the migration notes and ping the reviewer when the branch is green'.split(
    ' ',
  );

const FILES = [
  'src/auth/session.ts',
  'src/api/routes.ts',
  'test/auth.test.ts',
  'docs/migrations.md',
  'package.json',
];

const KINDS = [
  { type: 'task.request', status: 'open', room: 'coordination', weight: 3 },
  { type: 'event.ack', status: 'claimed', room: 'coordination', weight: 3 },
  { type: 'note', status: null, room: 'general', weight: 3 },
  { type: 'patch.ready', status: 'ready', room: 'patches', weight: 1 },
  { type: 'task.update', status: 'blocked', room: 'coordination', weight: 1 },
] as const;
const ADDRESSED: ReadonlySet<string> = new Set(['task.request', 'event.ack', 'patch.ready']);
const WEIGHTED = KINDS.flatMap((k) => Array.from({ length: k.weight }, () => k));

function hex(random: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(random() * 16).toString(16);
  return out;
}

/** A body of about `bytes` bytes of plain English-ish text. */
export function bodyText(random: () => number, bytes = 200): string {
  const words: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = pick(random, WORDS);
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, bytes);
}

/** An endless, deterministic generator of append inputs. */
export function makeTraffic(seed = 42): () => AppendInput {
  const random = seededRandom(seed);
  let task = 0;
  /** Each task's latest status, so a claim ack is only sent where the hub takes one (open or claimed). */
  const statusOf = new Map<string, string>();
  return () => {
    const kind = pick(random, WEIGHTED);
    const from = pick(random, AGENTS);
    const roll = random();
    // Addressed types always name a recipient (one agent or '*'); others may omit it.
    const to = roll < 0.75 ? pick(random, AGENTS) : roll < 0.85 || ADDRESSED.has(kind.type) ? '*' : null;
    if (kind.type === 'task.request') task++;
    const correlation = kind.type === 'note' ? null : `task-${Math.max(1, task - Math.floor(random() * 20))}`;
    let status: string | null = kind.status;
    if (correlation !== null) {
      const now = statusOf.get(correlation);
      // A claim on a task that is not open or claimed skips the task order (refused): a plain ack instead.
      if (kind.type === 'event.ack' && now !== 'open' && now !== 'claimed') status = null;
      else if (kind.type === 'task.request') statusOf.set(correlation, now ?? 'open');
      else if (kind.type !== 'task.update' && status !== null) statusOf.set(correlation, status);
    }
    return {
      type: kind.type,
      stream: 'palace',
      room: kind.room,
      from_agent: from,
      to_agent: to,
      correlation_id: correlation,
      branch: kind.type === 'patch.ready' ? `feat/session-${task % 50}` : null,
      base_commit: kind.type === 'patch.ready' ? hex(random, 40) : null,
      status,
      body: bodyText(random),
      metadata: { priority: random() < 0.2 ? 'high' : 'normal', files: [pick(random, FILES)] },
    };
  };
}

/** `count` inputs from a fresh generator. */
export function trafficBatch(count: number, seed = 42): AppendInput[] {
  const next = makeTraffic(seed);
  return Array.from({ length: count }, () => next());
}

/** `inputs` on tasks of their own: every correlation id gets `-<tag>`, so batches from different generators never share a task. */
export function ownTasks(inputs: readonly AppendInput[], tag: string): AppendInput[] {
  return inputs.map((x) => (typeof x.correlation_id === 'string' ? { ...x, correlation_id: `${x.correlation_id}-${tag}` } : x));
}

/**
 * Traffic for `loops` concurrent appenders, interleaved as they stride it (loop L takes items L,
 * L + loops, ...): each loop gets its own generator and its own tasks, so its share is valid in its
 * own order (a claim only on an open or claimed task) whatever the other loops commit beside it. One
 * shared generator is not: an ack and its task's request a few events apart land in one commit, and
 * the ack is checked first (task.out_of_order).
 */
export function concurrentTraffic(loops: number, perLoop: number, seed: number): AppendInput[] {
  const shares = Array.from({ length: loops }, (_, loop) => ownTasks(trafficBatch(perLoop, seed * 100 + loop), `l${loop}`));
  return Array.from({ length: perLoop * loops }, (_, i) => shares[i % loops]?.[Math.floor(i / loops)] ?? {});
}
