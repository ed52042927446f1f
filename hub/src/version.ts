// The palace version, read once from package.json.

import { readFileSync } from 'node:fs';

function readVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'palace' && pkg.version) return pkg.version;
    } catch {
      // try the next location (source tree vs dist/)
    }
  }
  return '0.0.0';
}

export const PALACE_VERSION = readVersion();
