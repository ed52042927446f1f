// Equivocation detection (issue 29, docs/sync-trust.md): peers show each origin's newest signed head
// (origin, seq, pos, chain, signature) in their version vector. A head that verifies with the origin's
// key but names another chain than the one this hub verified at that position proves that the origin
// signed two histories: both statements are kept (SyncEvidence), and the origin's events are no
// longer accepted from anyone. Heads past what this hub verified are not comparable (the pages decide).

import { checkpointBytes, type Checkpoint } from '../core/chain.js';
import { HubError } from '../errors.js';
import { fingerprint, publicKeyFromRaw, verifyBytes } from '../logstream/signatures.js';
import type { ReplicaStore } from '../logstream/replica-store.js';

/** The refusal for an origin caught signing two chains. */
export function equivocationError(origin: string, detail: string): HubError {
  return new HubError(
    'sync.equivocation',
    `origin ${origin} signed two different chains (${detail}): equivocation; both signed statements are kept as evidence and this hub no longer accepts ${origin}'s events`,
    { data: { origin } },
  );
}

/**
 * Compares every head the peer shows with what this hub verified; returns one error per origin
 * proven to equivocate (new or already known), recording new proofs. Heads of unknown origins, of
 * this hub itself, with a bad signature or past what is verified here prove nothing and are skipped.
 */
export function checkHeads(replica: ReplicaStore, heads: readonly Checkpoint[], peerName: string): HubError[] {
  const errors: HubError[] = [];
  const seen = new Set<string>();
  for (const head of heads) {
    // One head per origin is looked at (a peer listing one origin 10,000 times costs one signature check).
    if (head.origin === replica.replicaId || seen.has(head.origin)) continue;
    seen.add(head.origin);
    const known = replica.originKey(head.origin);
    const key = known ? publicKeyFromRaw(known.publicKey) : undefined;
    if (!known || !key) continue;
    if (!verifyBytes(key, checkpointBytes(head), head.sig)) continue;
    const ours = replica.evidence.heldAt(head.origin, head.pos);
    if (!ours) continue;
    if (ours.chain_at_pos === head.chain && ours.seq_at_pos === head.seq) continue;
    replica.evidence.recordEquivocation({ origin: head.origin, pos: head.pos, ours, theirs: head, public_key: known.publicKey, via_peer: peerName });
    errors.push(
      equivocationError(
        head.origin,
        `at position ${head.pos} this hub holds chain ${ours.chain_at_pos.slice(0, 12)}… (origin_seq ${ours.seq_at_pos}), peer '${peerName}' shows ${head.chain.slice(0, 12)}… (origin_seq ${head.seq}), both signed by ${fingerprint(known.publicKey)}`,
      ),
    );
  }
  return errors;
}
