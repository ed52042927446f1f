// The registry of benchmark suites, in the order they run and appear in BENCHMARKS.md.
// Later suites (hub, memory, sync, mine) are added here.

import type { Suite } from './figure.js';
import { logstreamSuite } from './logstream.js';

export const SUITES: readonly Suite[] = [logstreamSuite];

export function findSuite(name: string): Suite | undefined {
  return SUITES.find((s) => s.name === name);
}
