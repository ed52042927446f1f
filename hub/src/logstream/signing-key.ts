// The hub's Ed25519 signing key: minted with node:crypto on first open, kept as PKCS#8 PEM mode 0600
// beside the log (`logstream.key` next to `logstream.sqlite3`), never re-minted once the log has
// recorded its public key. Private key bytes never leave this module except as a KeyObject.

import { generateKeyPairSync, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmodSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import { rawPublicKey } from './signatures.js';

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Raw 32-byte public key, base64url: the replica's public identity. */
  publicRaw: string;
}

/** `<dir>/<name>.key` beside `<dir>/<name>.sqlite3`. */
export function keyPathFor(logPath: string): string {
  return `${logPath.replace(/\.sqlite3?$/, '')}.key`;
}

function fromPrivate(privateKey: KeyObject): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the signing key is not an Ed25519 key');
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicRaw: rawPublicKey(publicKey) };
}

/** A fresh key held only in memory (for `:memory:` logs). */
export function ephemeralKey(): SigningKey {
  return fromPrivate(generateKeyPairSync('ed25519').privateKey);
}

/**
 * Reads the key at `path`, minting it first when `mayCreate` and there is none. Two processes
 * opening a fresh palace at once agree: the key is written whole to a file of this process's own and
 * published by a hard link, which fails if a key is there already, so the loser reads the winner's
 * key and never a file still being written.
 */
export function loadSigningKey(path: string, mayCreate: boolean): SigningKey {
  let pem: string | undefined;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (pem === undefined) {
    if (!mayCreate) throw new Error(`the hub's signing key ${path} is missing`);
    const { privateKey } = generateKeyPairSync('ed25519');
    const text = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, text, { mode: 0o600 });
      linkSync(tmp, path);
      pem = text;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      pem = readFileSync(path, 'utf8');
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  if (process.platform !== 'win32') {
    try {
      chmodSync(path, 0o600);
    } catch {
      // a read-only file system: the mode was set at creation
    }
  }
  return fromPrivate(createPrivateKey({ key: pem, format: 'pem' }));
}
