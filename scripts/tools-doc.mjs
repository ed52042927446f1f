// Writes docs/tools.md from the built tool registry (run through `npm run docs:tools`, which builds first).
import { writeFileSync } from 'node:fs';
import { stdout } from 'node:process';
import { fileURLToPath } from 'node:url';

const { toolReference } = await import('../dist/hub/src/mcp/tools/reference.js');
writeFileSync(fileURLToPath(new globalThis.URL('../docs/tools.md', import.meta.url)), toolReference());
stdout.write('wrote docs/tools.md\n');
