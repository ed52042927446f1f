// Scripts started in a worker thread or a child process must be compiled JavaScript. In the built
// package they sit beside the module that starts them; tests run the TypeScript sources, whose
// compiled twins are under dist/ (vitest's global setup builds it).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { HubError, type ErrorCode } from './errors.js';

/** `file` (e.g. `./embed-worker.js`) beside `fromUrl`, else at `repoPath` under the repository's dist/. */
export function compiledScript(fromUrl: string, file: string, repoPath: string, missing: ErrorCode): URL {
  const here = new URL(file, fromUrl);
  if (existsSync(fileURLToPath(here))) return here;
  const root = fileURLToPath(new URL('../../', import.meta.url)); // hub/src/ → repository (or dist/)
  const built = new URL(`file://${root}dist/${repoPath}`);
  if (existsSync(fileURLToPath(built))) return built;
  throw new HubError(missing, `${repoPath} is not built: run \`npm run build\``);
}
