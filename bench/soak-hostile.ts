// The soak's hostile load (issue 17): SSE readers that replay a big log and stop reading, a flood of
// palace_event_wait calls past the hub's cap, and oversized list inputs; plus the /healthz prober that
// measures the hub's worst latency with and without that load. Counts outcomes; never asserts timings.

import { request as httpRequest, type IncomingMessage } from 'node:http';

import { createSseParser } from '../hub/src/core/sse-frames.js';
import { Logstream } from '../hub/src/logstream/logstream.js';
import { RawMcp } from './hub-clients.js';
import { sleep } from './stats.js';

export interface HostileOptions {
  /** Readers that open the stream from the start of the log and then read nothing. */
  stalledReaders: number;
  /** The hub's PALACE_SSE_STALL_MS: a stalled reader looks again after twice that. */
  stallMs: number;
  /** Concurrent palace_event_wait loops of the flood (more than the hub's cap admits). */
  floodWaits: number;
  /** Values in each oversized list input (the attack used 30,000). */
  oversizedValues: number;
  /** First event of the log: the stalled readers replay from here. */
  replayFrom: string;
}

export interface HostileCounts {
  stalledOpens: number;
  /** Stalled readers the hub closed with its last `event: error` frame. */
  sseDrops: number;
  waitsAdmitted: number;
  waitsRefused: number;
  oversizedRefused: number;
  /** Anything the hostile load saw that the hub must never do (an oversized input accepted, a 5xx...). */
  failures: string[];
}

/** Appends `count` events with `bodyBytes` bodies straight to the palace's log (before the hub starts). */
export function prefillLog(palace: string, count: number, bodyBytes: number): string {
  const log = Logstream.open(palace);
  try {
    const body = 'f'.repeat(bodyBytes);
    let first = '';
    for (let i = 0; i < count; i++) {
      const event = log.appendNow({
        type: 'soak.filler',
        stream: 'project/soak-filler',
        room: 'filler',
        from_agent: 'soak-filler',
        to_agent: 'nobody',
        correlation_id: `filler_${i}`,
        body,
      });
      first ||= event.id;
    }
    return first;
  } finally {
    log.close();
  }
}

/** Fetches /healthz every `everyMs` and keeps each latency with when it was sent (epoch ms). */
export function startHealthProbe(
  url: string,
  everyMs = 100,
): { samples: Array<{ atMs: number; ms: number }>; stop: () => Promise<void> } {
  const samples: Array<{ atMs: number; ms: number }> = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const sent = performance.now();
      const at = Date.now();
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) });
        await res.text();
        samples.push({ atMs: at, ms: performance.now() - sent });
      } catch {
        samples.push({ atMs: at, ms: performance.now() - sent });
      }
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Opens the stream from `since` and pauses the response at once. */
function openPaused(url: string, since: string): Promise<IncomingMessage> {
  const target = new URL(`${url}/logstream/stream?since_event_id=${encodeURIComponent(since)}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: Number(target.port),
        path: target.pathname + target.search,
        headers: { Accept: 'text/event-stream' },
      },
      (res) => {
        res.pause();
        resolve(res);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Resumes a paused stream and reads for at most `ms`; whether it ended with the hub's `event: error` frame. */
function readBriefly(res: IncomingMessage, ms: number): Promise<boolean> {
  const parser = createSseParser();
  let dropped = false;
  res.setEncoding('utf8');
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.destroy();
      resolve(dropped);
    };
    const timer = setTimeout(done, ms);
    res.on('data', (chunk: string) => {
      for (const frame of parser.push(chunk)) if (frame.event === 'error') dropped = true;
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
    res.resume();
  });
}

/** Starts the hostile load; `stop()` ends it and returns what it saw. */
export function startHostileLoad(
  url: string,
  options: HostileOptions,
): { stop: () => Promise<HostileCounts> } {
  const counts: HostileCounts = {
    stalledOpens: 0,
    sseDrops: 0,
    waitsAdmitted: 0,
    waitsRefused: 0,
    oversizedRefused: 0,
    failures: [],
  };
  let running = true;
  const mcp = new RawMcp(url);

  // Each loop starts at a random point of its first cycle, as a steady flood of clients would; a burst
  // of them in one instant measures the cost of N simultaneous requests, not what the hub holds.
  const stalled = Array.from({ length: options.stalledReaders }, async () => {
    await sleep(Math.random() * options.stallMs);
    while (running) {
      let res: IncomingMessage;
      try {
        res = await openPaused(url, options.replayFrom);
      } catch (err) {
        counts.failures.push(`stalled reader: ${(err as Error).message}`);
        return;
      }
      if (res.statusCode !== 200) {
        res.destroy();
        if (res.statusCode !== 503)
          counts.failures.push(`stalled reader: the stream answered ${res.statusCode}`);
        await sleep(500);
        continue;
      }
      counts.stalledOpens++;
      await sleep(options.stallMs * 2);
      if (await readBriefly(res, 5_000)) counts.sseDrops++;
    }
  });

  const flood = Array.from({ length: options.floodWaits }, async (_, i) => {
    await sleep(Math.random() * 1_500);
    while (running) {
      try {
        await mcp.call('palace_event_wait', { to_agent: `flood-${i}`, timeout_ms: 10_000 }); // held like the 20,000
        counts.waitsAdmitted++;
      } catch (err) {
        const message = (err as Error).message;
        if (!message.includes('http.busy')) counts.failures.push(`flood wait: ${message.slice(0, 200)}`);
        else counts.waitsRefused++;
        await sleep(1_000 + Math.random() * 500); // the refusal's retry_after_ms, with jitter as clients add
      }
    }
  });

  const many = (prefix: string): string[] =>
    Array.from({ length: options.oversizedValues }, (_, i) => `${prefix}-${i}`);
  const oversized = (async () => {
    const attacks: Array<[string, Record<string, unknown>]> = [
      ['palace_event_list', { to_agent: many('agent') }],
      ['palace_search', { query: 'x', tags: many('tag') }],
      [
        'palace_event_append',
        { type: 'status', stream: 's', room: 'r', from_agent: 'hostile', artifact_ids: many('art') },
      ],
    ];
    while (running)
      for (const [name, args] of attacks) {
        try {
          await mcp.call(name, args);
          counts.failures.push(`${name} accepted ${options.oversizedValues} list values`);
        } catch (err) {
          const message = (err as Error).message;
          if (message.includes('-32602') && message.includes('at most')) counts.oversizedRefused++;
          else counts.failures.push(`${name} oversized: ${message.slice(0, 200)}`);
        }
        await sleep(100);
      }
  })();

  return {
    stop: async () => {
      running = false;
      await Promise.all([...stalled, ...flood, oversized]);
      return counts;
    },
  };
}
