// The long forms of the reliability suite, run by `npm run soak` after the soak itself: more
// kill -9 rounds, more fuzz runs per tool (full-size inputs everywhere), more concurrent writes,
// and a longer short-soak. Each knob can be overridden from the environment.
/* global URL, process */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const defaults = {
  PALACE_CRASH_ROUNDS: '20',
  PALACE_FUZZ_RUNS: '200',
  PALACE_CONCURRENCY_SCALE: '5',
  PALACE_SOAK_AGENTS: '20',
  PALACE_SOAK_MS: '60000',
};
const env = { ...defaults, ...process.env };
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
process.stderr.write(
  `[soak] long reliability suite: ${Object.keys(defaults)
    .map((k) => `${k}=${env[k]}`)
    .join(' ')}\n`,
);
const run = spawnSync(process.execPath, [vitest, 'run', 'test/reliability', '--testTimeout', '0'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
