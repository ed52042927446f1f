// Vitest globalSetup: compiles the CLI once (`npm run build`) so integration tests can spawn
// `node bin/palace.js` against the current sources. Type errors do not stop the tests here (tsc
// still emits, and `npm test` fails on them in its typecheck step); a missing output does.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function setup(): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  try {
    execFileSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (err) {
    if (!existsSync(`${ROOT}/dist/cli/main.js`)) throw err;
    process.stderr.write('build-once: the build reported errors; testing what it emitted (npm test typechecks separately)\n');
  }
}
