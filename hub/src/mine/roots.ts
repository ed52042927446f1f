// Where palace_mine may read: the configured roots (PALACE_MINE_ROOTS) or by default the home
// directory, never credential folders, the palace itself or palace's state directory, and nothing at
// all on a network-exposed hub until roots are configured. Symlinks are resolved before every check,
// and a refusal says the same thing whether or not the path exists.

import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';

import { fileMineRoots, type PalaceConfig } from '../config.js';
import { HubError } from '../errors.js';

/** Folders under the home directory that hold credentials: never mined, whatever the roots. */
export const SECRET_DIRS: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.palace',
  '.azure',
  '.kube',
  '.docker',
  '.password-store',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/gcloud',
  '.config/gh',
  '.local/share/keyrings',
];

export interface MinePolicy {
  /** Directories (as given and resolved) a mine may read under. */
  allowed: string[];
  /** Directories never read (as given and resolved). */
  denied: string[];
  /** Why nothing is allowed, when nothing is. */
  closed?: string;
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A path in both its lexical and its resolved form (they differ when it is or crosses a symlink). */
function bothForms(path: string): string[] {
  const lexical = resolve(path);
  return [...new Set([lexical, realOr(lexical)])];
}

/** Paths compare as the platform's file system does (Windows: case-insensitive). */
const fold = process.platform === 'win32' ? (p: string): string => p.toLowerCase() : (p: string): string => p;

/**
 * Whether `path` is `dir` or under it. Both are absolute and normalized (resolve() or realpath), so a
 * prefix test is exact; a walk asks it for every file against every root and credential folder.
 */
function inside(dir: string, path: string): boolean {
  const d = fold(dir);
  const p = fold(path);
  return p === d || p.startsWith(d.endsWith(sep) ? d : `${d}${sep}`);
}

/**
 * The mining policy of a hub or CLI process: PALACE_MINE_ROOTS (else the home directory), plus the
 * roots `palace init` recorded in config.json (`mine_roots`, read at every call: no restart needed).
 */
export function minePolicy(config: Readonly<PalaceConfig>, options: { networkExposed?: boolean | undefined } = {}): MinePolicy {
  const home = homedir();
  const denied = [...SECRET_DIRS.map((d) => join(home, d)), config.home, config.palacePath].flatMap(bothForms);
  const recorded = fileMineRoots(config.home);
  if (config.mineRoots === undefined && options.networkExposed && recorded.length === 0)
    return {
      allowed: [],
      denied,
      closed: `this hub listens on a network address and mines nothing until PALACE_MINE_ROOTS or mine_roots in ${join(config.home, 'config.json')} names the directories it may read`,
    };
  const roots = [...(config.mineRoots ?? (options.networkExposed ? [] : [home])), ...recorded];
  return { allowed: roots.flatMap(bothForms), denied };
}

/** Whether `dir` lies in a folder that is never mined (credentials, palace state, the palace). */
export function deniedDir(policy: MinePolicy, dir: string): boolean {
  const lexical = resolve(dir);
  return policy.denied.some((d) => inside(d, lexical) || inside(d, realOr(lexical)));
}

function refused(policy: MinePolicy, given: string): HubError {
  return new HubError(
    'mine.path_refused',
    policy.closed ??
      `'${given}' is not under a directory this hub may mine (PALACE_MINE_ROOTS or mine_roots in ~/.palace/config.json; \`palace init <dir>\` adds one; credential folders and the palace itself never are)`,
    { field: 'source' },
  );
}

/** Whether `path` (already resolved) may be read under the policy. */
export function admitted(policy: MinePolicy, path: string): boolean {
  return policy.allowed.some((root) => inside(root, path)) && !policy.denied.some((dir) => inside(dir, path));
}

/**
 * The real path of the source to mine, or a refusal. A path outside the roots is refused before
 * anything is looked up, so the answer never tells whether it exists; one inside them that is a
 * symlink out of them is refused too.
 */
export function admitSource(policy: MinePolicy, given: string): string {
  const lexical = resolve(given);
  if (!admitted(policy, lexical)) throw refused(policy, given);
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    throw new HubError('mine.source_missing', `nothing to mine at ${lexical}: no such file or directory`, { field: 'source' });
  }
  if (!admitted(policy, real)) throw refused(policy, given);
  return real;
}

/**
 * A walk filter: a file or folder found under an admitted source is read only if its real path is
 * admitted. The walk gives the real path it knows (its folder's real path and the entry's name, as it
 * never follows a symlink); without one the path is resolved here.
 */
export function walkAdmits(policy: MinePolicy): (path: string, real?: string) => boolean {
  return (path, real) => {
    try {
      return admitted(policy, real ?? realpathSync(path));
    } catch {
      return false;
    }
  };
}
