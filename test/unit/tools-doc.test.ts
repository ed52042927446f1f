// docs/tools.md is the registry's own reference; a tool added or changed without regenerating it fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { toolReference } from '../../hub/src/tools/reference.js';
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
});
