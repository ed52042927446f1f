// Hashing and Ed25519 signatures of trusted sync with node:crypto: chain links over the canonical
// bytes of core/chain.ts, raw public keys and their fingerprints, signing and verifying.

import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** The chain value before an origin's first event: 32 zero bytes. */
export const GENESIS_CHAIN: Buffer = Buffer.alloc(32);

/** chain(n) = sha256(chain(n-1) || canonical bytes of event n); a string is hashed as its UTF-8 bytes. */
export function nextChain(previous: Buffer, canonical: Buffer | string): Buffer {
  return createHash('sha256').update(previous).update(canonical).digest();
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A raw 32-byte Ed25519 public key, base64url, as a KeyObject; undefined when malformed. */
export function publicKeyFromRaw(raw: string): KeyObject | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(raw)) return undefined;
  const bytes = Buffer.from(raw, 'base64url');
  if (bytes.length !== 32) return undefined;
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, bytes]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** The raw base64url form of an Ed25519 public key. */
export function rawPublicKey(key: KeyObject): string {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32).toString('base64url');
}

/** `SHA256:<base64, no padding>` of the raw public key, as ssh prints fingerprints. */
export function fingerprint(rawKey: string): string {
  const digest = createHash('sha256').update(Buffer.from(rawKey, 'base64url')).digest('base64');
  return `SHA256:${digest.replace(/=+$/, '')}`;
}

export function signBytes(privateKey: KeyObject, bytes: Buffer): string {
  return sign(null, bytes, privateKey).toString('base64url');
}

/** Whether `sig` is a valid Ed25519 signature of `bytes` by `publicKey`; never throws. */
export function verifyBytes(publicKey: KeyObject, bytes: Buffer, sig: string): boolean {
  if (!/^[A-Za-z0-9_-]{86}$/.test(sig)) return false;
  try {
    return verify(null, bytes, publicKey, Buffer.from(sig, 'base64url'));
  } catch {
    return false;
  }
}
