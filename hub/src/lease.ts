// The palace lease: `<palace>/hub.lock`, created exclusively by the one server process of a palace
// (a writer, or a --read-only hub: never two servers on one palace) or a direct CLI writer. A holder
// whose pid is dead is stale and is taken over; a live one is named.

import { mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

import { HubError } from './errors.js';
import { isPidAlive } from './registration.js';

export interface LeaseHolder {
  pid: number;
  address: string | null;
  acquired_at: string;
  role: string;
}

export interface Lease {
  path: string;
  holder: LeaseHolder;
  /** Records the address once the hub listens. */
  update(address: string): void;
  release(): void;
}

/** Lease files held by this process: a lease naming our own pid is live only if we took it. */
const heldHere = new Set<string>();

export function leasePath(palacePath: string): string {
  return join(palacePath, 'hub.lock');
}

/** The current holder, if the lease file exists and its pid is alive. */
export function leaseHolder(palacePath: string): LeaseHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(leasePath(palacePath), 'utf8')) as LeaseHolder;
    return typeof h.pid === 'number' && isPidAlive(h.pid) ? h : undefined;
  } catch {
    return undefined;
  }
}

function describeHolder(h: LeaseHolder): string {
  return `pid ${h.pid}${h.address ? ` at ${h.address}` : ''} (${h.role}, since ${h.acquired_at})`;
}

/** Takes the lease or throws `lease.held` naming the live holder. */
export function acquireLease(palacePath: string, role: string, address: string | null = null): Lease {
  mkdirSync(palacePath, { recursive: true, mode: 0o700 });
  const path = leasePath(palacePath);
  const holder: LeaseHolder = { pid: process.pid, address, acquired_at: new Date().toISOString(), role };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const current = leaseHolder(palacePath);
      // Our own pid is live, but the file may predate us (pid reuse): it is ours only if we took it.
      if (current && (current.pid !== process.pid || heldHere.has(path)))
        throw new HubError('lease.held', `the palace ${palacePath} is already served by ${describeHolder(current)}; stop it first or talk to it`, {
          data: { holder: current },
        });
      // Stale (dead pid or unreadable): move it aside atomically; only one contender wins the rename.
      try {
        renameSync(path, `${path}.stale.${process.pid}`);
        rmSync(`${path}.stale.${process.pid}`, { force: true });
      } catch {
        // another process moved it first; try again
      }
      continue;
    }
    writeSync(fd, JSON.stringify(holder));
    closeSync(fd);
    heldHere.add(path);
    return makeLease(path, holder);
  }
  throw new HubError('lease.held', `could not take the writer lease ${path}: another process keeps taking it`);
}

function makeLease(path: string, holder: LeaseHolder): Lease {
  let released = false;
  return {
    path,
    holder,
    update(address) {
      holder.address = address;
      const tmp = `${path}.${process.pid}.tmp`;
      const fd = openSync(tmp, 'w', 0o600);
      writeSync(fd, JSON.stringify(holder));
      closeSync(fd);
      renameSync(tmp, path);
    },
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      try {
        const h = JSON.parse(readFileSync(path, 'utf8')) as LeaseHolder;
        if (h.pid === process.pid) rmSync(path, { force: true });
      } catch {
        // already gone
      }
    },
  };
}
