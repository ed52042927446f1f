// logstream/ reads file by file (issue 30): no import circle among its files (type-only imports
// count: a circle of types is where a circle of code starts), and no file over 400 lines.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

const DIR = 'hub/src/logstream';
const MAX_LINES = 400;

function sources(): Map<string, string> {
  return new Map(
    readdirSync(DIR)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [f.replace(/\.ts$/, ''), readFileSync(join(DIR, f), 'utf8')]),
  );
}

/** Every import or re-export of a sibling file, by name. */
function siblings(source: string): string[] {
  return [...source.matchAll(/(?:import|export)\s[^;]*?from\s+'\.\/([\w.-]+)\.js'/g)].map((m) => m[1] as string);
}

/** The import circles of a graph, each as a path that ends where it starts. */
function circles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('logstream/ modules', () => {
  it('finds a circle when there is one (the check itself)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(graph)).toEqual(['a -> b -> c -> a']);
    expect(siblings("import type { X } from './x.js';\nexport { y } from './y.js';\nimport z from '../z.js';\n")).toEqual(['x', 'y']);
  });

  it('has no import circle', () => {
    const graph = new Map([...sources()].map(([name, src]) => [name, siblings(src)]));
    expect(graph.size).toBeGreaterThan(20);
    expect(circles(graph)).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = [...sources()].filter(([, src]) => src.split('\n').length > MAX_LINES).map(([name, src]) => `${name}.ts: ${src.split('\n').length}`);
    expect(long).toEqual([]);
  });
});
