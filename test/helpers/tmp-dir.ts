// Temporary directories for tests that need real files; each is removed by `cleanup`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TmpDir {
  path: string;
  cleanup: () => void;
}

export function makeTmpDir(prefix = 'palace-test-'): TmpDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
