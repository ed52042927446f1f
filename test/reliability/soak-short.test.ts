// The short form of `npm run soak`: 5 agents run the full delegation loop (request, claim, patch,
// applied, outcome drawer) for 10 s through a real child hub beside long-polls and SSE watchers.
// Asserts zero errors, zero lost or duplicated writes and no missed SSE delivery; never timings.

import { describe, expect, it } from 'vitest';

import { reportLines, runSoak } from '../../bench/soak.js';

const AGENTS = Number(process.env.PALACE_SOAK_AGENTS ?? 5);
const DURATION_MS = Number(process.env.PALACE_SOAK_MS ?? 10_000);

describe('soak (short form)', () => {
  it(
    `${AGENTS} agents for ${DURATION_MS / 1000} s: no error, nothing lost, nothing duplicated`,
    async () => {
      const report = await runSoak({
        agents: AGENTS,
        durationMs: DURATION_MS,
        longPollers: 5,
        sseWatchers: 2,
        rssEveryMs: 1_000,
        env: process.env,
      });
      const text = reportLines(report).join('\n');
      expect(report.errors, text).toEqual([]);
      expect(report.loopsCompleted, text).toBeGreaterThan(0);
      expect(report.lostEvents, text).toBe(0);
      expect(report.duplicateEvents, text).toBe(0);
      expect(report.lostDrawers, text).toBe(0);
      expect(report.duplicateDrawers, text).toBe(0);
      expect(report.sseMissed, text).toBe(0);
      expect(report.rss.length, text).toBeGreaterThan(0);
    },
    DURATION_MS + 120_000,
  );
});
