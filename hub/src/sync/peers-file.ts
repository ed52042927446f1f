// `<palace>/peers.json`: {"peers": [{"name", "url", "token", "public_key", "replica_id"}]}, the peers
// this hub pulls from; "public_key" pins the peer's Ed25519 key (see docs/sync-trust.md).
// Parsing is strict and every error names the file; reading a missing file gives no peers.
// Tokens stay in memory only: they are never logged, never shown in the mesh estate.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { publicKeyFromRaw } from '../logstream/signatures.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import { HubError } from '../errors.js';
import { peerBaseUrl } from './peer-url.js';

export const PEERS_FILE = 'peers.json';

export interface PeerEntry {
  /** Unique within the file; defaults to the url. */
  name: string;
  /** Normalized base URL of the peer hub. */
  url: string;
  /** The peer's bearer token, exchanged out-of-band; absent for a tokenless loopback peer. */
  token: string | undefined;
  /** The peer's pinned Ed25519 public key (raw, base64url; `palace sync trust <url>` prints it). */
  publicKey?: string | undefined;
  /** The replica id the pinned peer must present, when given. */
  replicaId?: string | undefined;
  /** Wings whose memory replicates with this peer, both ways (docs/memory-replication.md); none by default. */
  wings?: string[] | undefined;
  /** The knowledge graph's facts replicate with this peer, both ways ("kg": true). */
  kg?: boolean | undefined;
}

export function peersFilePath(palacePath: string): string {
  return join(palacePath, PEERS_FILE);
}

function malformed(path: string, message: string): HubError {
  return new HubError('sync.peers_file', `${path} is malformed: ${message}`, { field: PEERS_FILE });
}

/** One peer entry {name?, url, token?}; throws an Error saying what is wrong with it. */
export function parsePeerEntry(raw: unknown): PeerEntry {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error('a peer must be an object {"name", "url", "token"}');
  const entry = raw as { name?: unknown; url?: unknown; token?: unknown; public_key?: unknown; replica_id?: unknown; wings?: unknown; kg?: unknown };
  if (typeof entry.url !== 'string' || entry.url.trim() === '')
    throw new Error('a peer needs a "url" (the peer hub\'s base address)');
  if (entry.name !== undefined && (typeof entry.name !== 'string' || entry.name.trim() === ''))
    throw new Error('"name" must be a non-empty string');
  if (entry.token !== undefined && entry.token !== null && typeof entry.token !== 'string')
    throw new Error('"token" must be a string');
  if (
    entry.public_key !== undefined &&
    entry.public_key !== null &&
    (typeof entry.public_key !== 'string' || !publicKeyFromRaw(entry.public_key.trim()))
  )
    throw new Error('"public_key" must be a raw Ed25519 public key, 43 base64url characters (as `palace sync trust <url>` prints it)');
  if (entry.replica_id !== undefined && entry.replica_id !== null && (typeof entry.replica_id !== 'string' || !REPLICA_ID_PATTERN.test(entry.replica_id)))
    throw new Error('"replica_id" must be a replica id rep_<12 hex>');
  if (
    entry.wings !== undefined &&
    entry.wings !== null &&
    (!Array.isArray(entry.wings) || entry.wings.some((w) => typeof w !== 'string' || w.trim() === '' || w.trim().startsWith('#') || w.length > 128))
  )
    throw new Error('"wings" must be a list of wing names (each 1-128 characters, not starting with #) whose memory replicates with this peer');
  if (entry.kg !== undefined && entry.kg !== null && typeof entry.kg !== 'boolean') throw new Error('"kg" must be true or false (whether knowledge-graph facts replicate with this peer)');
  const wings = Array.isArray(entry.wings) ? [...new Set((entry.wings as string[]).map((w) => w.trim()))] : undefined;
  const url = peerBaseUrl(entry.url.trim());
  const name = typeof entry.name === 'string' ? entry.name.trim() : url;
  const token = typeof entry.token === 'string' && entry.token.trim() !== '' ? entry.token.trim() : undefined;
  const publicKey = typeof entry.public_key === 'string' ? entry.public_key.trim() : undefined;
  const replicaId = typeof entry.replica_id === 'string' ? entry.replica_id : undefined;
  return { name, url, token, ...(publicKey ? { publicKey } : {}), ...(replicaId ? { replicaId } : {}), ...(wings && wings.length > 0 ? { wings } : {}), ...(entry.kg === true ? { kg: true } : {}) };
}

/** Parses the text of a peers file; throws `sync.peers_file` naming the file and the problem. */
export function parsePeersFile(text: string, path: string): PeerEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw malformed(path, `not JSON (${(err as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw malformed(path, 'expected an object {"peers": [...]}');
  const list = (value as { peers?: unknown }).peers;
  if (list === undefined) throw malformed(path, 'missing the top-level key "peers"');
  if (!Array.isArray(list)) throw malformed(path, '"peers" must be a list');
  const peers: PeerEntry[] = [];
  list.forEach((raw: unknown, i) => {
    let peer: PeerEntry;
    try {
      peer = parsePeerEntry(raw);
    } catch (err) {
      throw malformed(path, `peers[${i}]: ${(err as Error).message}`);
    }
    if (peers.some((p) => p.name === peer.name))
      throw malformed(path, `peers[${i}]: the name '${peer.name}' is used twice`);
    peers.push(peer);
  });
  return peers;
}

/** The raw text of the peers file, or null when there is none. Other read errors throw. */
export function readPeersText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new HubError('sync.peers_file', `cannot read ${path}: ${(err as Error).message}`, {
      field: PEERS_FILE,
    });
  }
}

/** The peers listed in the file ([] when it does not exist). */
export function loadPeers(path: string): PeerEntry[] {
  const text = readPeersText(path);
  return text === null ? [] : parsePeersFile(text, path);
}

/** Whether group or others can read the file (it holds tokens); false when unknown. */
export function isShared(path: string): boolean {
  if (process.platform === 'win32') return false;
  try {
    return (statSync(path).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
