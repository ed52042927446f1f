// The registry of benchmark suites, in the order they run and appear in BENCHMARKS.md.
// Later suites (memory, mine) are added here.

import { cliSuite } from './cli.js';
import type { Suite } from './figure.js';
import { hostileSuite } from './hostile.js';
import { hubSuite } from './hub.js';
import { logstreamSuite } from './logstream.js';
import { mcpSuite } from './mcp.js';
import { memorySuite } from './memory.js';
import { memorySyncSuite } from './memory-sync.js';
import { mineSuite } from './mine.js';
import { retrievalSuite } from './retrieval.js';
import { scaleSuite } from './scale.js';
import { syncSuite } from './sync.js';

export const SUITES: readonly Suite[] = [logstreamSuite, hubSuite, mcpSuite, memorySuite, syncSuite, memorySyncSuite, hostileSuite, mineSuite, cliSuite, retrievalSuite, scaleSuite];

export function findSuite(name: string): Suite | undefined {
  return SUITES.find((s) => s.name === name);
}
