// docs/tools.md is the registry's own reference; a tool added or changed without regenerating it fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { surfaceDocs, toolReference, typeOf } from '../../hub/src/mcp/tools/reference.js';
import { TOOLS } from '../../hub/src/mcp/tools/registry.js';

describe('docs/tools.md', () => {
  it('is what `npm run docs:tools` generates from the registry now', () => {
    expect(readFileSync('docs/tools.md', 'utf8'), 'docs/tools.md is stale: run npm run docs:tools').toBe(toolReference());
  });

  it('has a section and a table row for every tool', () => {
    const doc = toolReference();
    for (const t of TOOLS) {
      expect(doc).toContain(`\n## ${t.name}\n`);
      expect(doc).toContain(`| [\`${t.name}\`](#${t.name}) `);
    }
  });

  it('lists every resource template and every prompt with its arguments', () => {
    const doc = toolReference();
    const { resources, prompts } = surfaceDocs();
    expect(resources.map((r) => r.uriTemplate)).toContain('palace://inbox/{agent}');
    expect(prompts.map((p) => p.name)).toEqual(['delegate', 'next_task', 'review_patch', 'wake_up', 'file_decision']);
    for (const r of resources) expect(doc).toContain(`| \`${r.uriTemplate}\` |`);
    for (const p of prompts) {
      expect(doc).toContain(`\n## prompt ${p.name}\n`);
      for (const arg of Object.keys(p.args ?? {})) expect(doc).toContain(`| \`${arg}\` |`);
    }
  });
});

describe('the type column', () => {
  it('names an enum that may be one value or a list once (issue 31: the status enum was printed twice)', () => {
    const doc = toolReference();
    const row = doc.split('\n').find((l) => l.startsWith('| `status` |') && l.includes('a list means any'));
    expect(row).toBeDefined();
    expect(row!.match(/"superseded"/g)).toHaveLength(1);
    expect(row).toContain('or a list of them');
  });

  it('escapes a union once for the table and brackets a union inside an array', () => {
    expect(typeOf({ anyOf: [{ enum: ['a', 'b'] }, { type: 'array', items: { enum: ['a', 'b'] } }] })).toBe('"a" | "b", or a list of them');
    expect(typeOf({ type: 'array', items: { enum: ['a', 'b'] } })).toBe('("a" | "b")[]');
    expect(toolReference()).not.toContain('\\\\|');
  });
});
