// docs/tools.md is the registry's own reference; a tool added or changed without regenerating it fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { surfaceDocs, toolReference } from '../../hub/src/tools/reference.js';
import { TOOLS } from '../../hub/src/tools/registry.js';

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
