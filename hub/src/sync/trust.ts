// Whom a pull round believes (docs/sync-trust.md): the peer's key against its pin in peers.json (or
// trust on first use, recorded), and for every origin it serves, the key this hub already holds or
// one introduced by a statement signed by a pinned peer. Anything else is refused, never guessed.

import type { KeyObject } from 'node:crypto';

import { vouchBytes } from '../core/chain.js';
import { fingerprint, publicKeyFromRaw, verifyBytes } from '../logstream/signatures.js';
import { HubError } from '../errors.js';
import type { ReplicaStore } from '../logstream/replica-store.js';
import type { QuarantineRecord } from '../logstream/sync-evidence.js';
import type { PeerEntry } from './peers-file.js';
import type { VersionVectorMessage } from './protocol.js';

export interface PeerTrust {
  trust: 'pinned' | 'tofu';
  fingerprint: string;
  key: KeyObject;
  /** Set when the peer was trusted on first use just now (the caller warns loudly). */
  firstUse: boolean;
  /**
   * Set when a pin replaced a key trusted on first use for this replica: what was held under its name
   * (signed by that other key) was quarantined just now, and the origin is pulled again from 1.
   */
  quarantined?: QuarantineRecord;
}

function untrusted(message: string, data: Record<string, unknown> = {}): HubError {
  return new HubError('sync.untrusted', message, { data });
}

/**
 * Checks the identity a peer presents; throws `sync.untrusted` naming what does not match.
 * `pinnedElsewhere`: replica ids peers.json pins for other peers (name by id), which a peer trusted
 * on first use may not claim.
 */
export function admitPeer(
  replica: ReplicaStore,
  peer: PeerEntry,
  remote: VersionVectorMessage,
  pinnedElsewhere: ReadonlyMap<string, string> = new Map(),
): PeerTrust {
  const key = publicKeyFromRaw(remote.public_key);
  if (!key) throw untrusted(`peer '${peer.name}' presented a malformed public key`);
  const presented = fingerprint(remote.public_key);
  const known = replica.originKey(remote.replica_id);
  if (peer.publicKey) {
    if (remote.public_key !== peer.publicKey)
      throw untrusted(
        `peer '${peer.name}' presented key ${presented}, but peers.json pins ${fingerprint(peer.publicKey)}: refused (re-pin with \`palace sync trust ${peer.url}\` only if the peer really changed its key)`,
        { presented },
      );
    if (peer.replicaId && remote.replica_id !== peer.replicaId)
      throw untrusted(`peer '${peer.name}' presented replica ${remote.replica_id}, but peers.json pins ${peer.replicaId}: refused`);
    if (known && known.publicKey !== remote.public_key && known.source !== 'tofu')
      throw untrusted(
        `peer '${peer.name}' claims replica ${remote.replica_id}, whose key this hub already holds (${fingerprint(known.publicKey)}, ${known.source}): refused`,
      );
    // A late pin: the key trusted on first use for this replica id is not its real one. What that key
    // signed under this name is moved aside (kept as evidence), so the real origin is pulled from 1.
    let quarantined: QuarantineRecord | null = null;
    if (known && known.publicKey !== remote.public_key && known.source === 'tofu')
      quarantined = replica.evidence.quarantine(
        remote.replica_id,
        { publicKey: known.publicKey, source: known.source },
        `peers.json pins key ${presented} for replica ${remote.replica_id} (peer '${peer.name}'), not the key ${fingerprint(known.publicKey)} trusted on first use`,
      );
    if (known?.publicKey !== remote.public_key || known.source !== 'pinned')
      replica.rememberOriginKey(
        { origin: remote.replica_id, publicKey: remote.public_key, source: 'pinned', vouchedBy: null },
        null,
        true,
      );
    return { trust: 'pinned', fingerprint: presented, key, firstUse: false, ...(quarantined ? { quarantined } : {}) };
  }
  const other = pinnedElsewhere.get(remote.replica_id);
  if (other !== undefined && other !== peer.name)
    throw untrusted(
      `peer '${peer.name}' (not pinned) claims replica ${remote.replica_id}, but peers.json pins it for peer '${other}': refused as an impostor; pin this peer's key only if it really is that hub`,
    );
  if (!known && (replica.versionVector()[remote.replica_id] ?? 0) > 0)
    throw untrusted(
      `peer '${peer.name}' (not pinned) claims replica ${remote.replica_id}, whose events this hub already holds from elsewhere: a first-use peer may not take over a known replica id; pin its key in peers.json if it really is that hub`,
    );
  if (known) {
    if (known.publicKey !== remote.public_key)
      throw untrusted(
        `peer '${peer.name}' (replica ${remote.replica_id}) presented key ${presented}, not the key this hub holds for it (${fingerprint(known.publicKey)}, ${known.source}): refused; pin the key in peers.json if it really changed`,
        { presented },
      );
    return { trust: 'tofu', fingerprint: presented, key, firstUse: false };
  }
  replica.rememberOriginKey({ origin: remote.replica_id, publicKey: remote.public_key, source: 'tofu', vouchedBy: null }, null);
  return { trust: 'tofu', fingerprint: presented, key, firstUse: true };
}

/**
 * The key events of `origin` must be signed with: the one this hub holds, else one the (pinned)
 * peer vouches for with its signature, which is then remembered. Throws `sync.untrusted`.
 */
export function originKeyFor(
  replica: ReplicaStore,
  origin: string,
  peer: { name: string; replicaId: string; trust: PeerTrust },
  remote: VersionVectorMessage,
): KeyObject {
  const known = replica.originKey(origin);
  if (known) {
    const key = publicKeyFromRaw(known.publicKey);
    if (!key) throw untrusted(`the key held for origin ${origin} is malformed`);
    return key;
  }
  const statement = remote.keys.find((k) => k.replica_id === origin);
  if (!statement)
    throw untrusted(`unknown origin key: no key is known for origin ${origin} and peer '${peer.name}' vouches for none`, { origin });
  if (peer.trust.trust !== 'pinned')
    throw untrusted(
      `unknown origin key: origin ${origin} is introduced by peer '${peer.name}', whose key is not pinned in peers.json (a trust-on-first-use peer can only give its own events)`,
      { origin },
    );
  if (!verifyBytes(peer.trust.key, vouchBytes(peer.replicaId, origin, statement.public_key), statement.vouch))
    throw new HubError('sync.bad_signature', `peer '${peer.name}' vouches for origin ${origin}'s key with an invalid signature`, {
      data: { origin },
    });
  const key = publicKeyFromRaw(statement.public_key);
  if (!key) throw untrusted(`peer '${peer.name}' vouches for a malformed key for origin ${origin}`);
  replica.rememberOriginKey(
    { origin, publicKey: statement.public_key, source: 'vouched', vouchedBy: peer.replicaId },
    statement.vouch,
  );
  return key;
}
