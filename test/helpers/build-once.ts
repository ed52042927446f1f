// Vitest globalSetup: compiles the CLI, the dashboard and the tray preload once (`npm run build`, skipped
// by scripts/build-if-stale.mjs when dist/ was built from exactly these sources), so tests spawn
// `node bin/palace.js` and load /ui from the current sources. Type errors do not stop
// the tests here (tsc still emits; `npm test` fails on them in its typecheck step); a missing output does.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function setup(): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  try {
    execFileSync(process.execPath, ['scripts/build-if-stale.mjs', '--quiet'], {
      cwd: ROOT,
      // stderr: what it builds and when it is ready (a first run takes ~30 s; silence looked frozen).
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } catch (err) {
    if (!existsSync(`${ROOT}/dist/cli/main.js`)) throw err;
    process.stderr.write(
      'build-once: the build reported errors; testing what it emitted (npm test typechecks separately)\n',
    );
    // `build` stops at tsc's errors; the dashboard and the preload are bundled by Vite regardless.
    for (const script of ['build:ui', 'build:preload'])
      execFileSync(npm, ['run', script, '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
}
