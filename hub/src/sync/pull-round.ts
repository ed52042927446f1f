// One pull round against one peer: read its version vector, then for every origin it holds beyond
// us (never our own) page through that origin's events in origin_seq order, fetching and verifying
// the artifacts of each event before the event itself. An origin stops at the first event that
// cannot be applied, so what we hold of any origin is always a prefix of its log: nothing is skipped
// and the next round resumes exactly there. Idempotent: replaying a round changes nothing.

import { pullPlan, type VersionVector } from '../core/replication.js';
import { HubError, toHubError } from '../errors.js';
import { MAX_PAGE_EVENTS, type ReplicaStore } from '../logstream/replica-store.js';
import type { PeerTransport } from './peer-transport.js';
import type { OpsMessage } from './protocol.js';

export interface PullOptions {
  signal?: AbortSignal;
  /** Events asked for per page (1-500, default 500). */
  pageLimit?: number;
  /**
   * Origins not to pull from this peer: the caller pulls them from their own hub, which is a healthy
   * direct peer (in a full mesh this keeps every event from crossing the wire twice).
   */
  skipOrigins?: ReadonlySet<string>;
}

/** What one round against one peer did. */
export interface PullReport {
  /** Whether the peer answered its version vector (it was reachable and spoke our protocol). */
  reached: boolean;
  peerReplica: string | null;
  remoteVector: VersionVector | null;
  pulledEvents: number;
  pulledArtifacts: number;
  duplicates: number;
  /** Events applied per origin this round. */
  perOrigin: Record<string, number>;
  /** Failures; an empty list means the round completed. */
  errors: HubError[];
  /** Things worth knowing that are not failures (e.g. a vector that promised more than was served). */
  notes: string[];
}

function emptyReport(): PullReport {
  return {
    reached: false,
    peerReplica: null,
    remoteVector: null,
    pulledEvents: 0,
    pulledArtifacts: 0,
    duplicates: 0,
    perOrigin: {},
    errors: [],
    notes: [],
  };
}

/** The page's events, checked to be `origin`'s, strictly ascending and after `after`. */
function checkPage(page: OpsMessage, origin: string, after: number): void {
  if (page.origin !== origin)
    throw new HubError('sync.bad_message', `asked for origin ${origin}, the peer served ${page.origin}`);
  let previous = after;
  for (const event of page.events) {
    if (event.origin_replica !== origin)
      throw new HubError(
        'sync.bad_message',
        `event ${event.id} of origin ${event.origin_replica} was served as origin ${origin}`,
      );
    if (event.origin_seq <= previous)
      throw new HubError(
        'sync.bad_message',
        `events of ${origin} were not served in ascending origin_seq order after ${after}`,
      );
    previous = event.origin_seq;
  }
}

/** Whether an error is about reaching the peer (end the whole round) rather than about one origin's data. */
function isTransportFailure(err: HubError): boolean {
  return err.code === 'sync.peer_failed' || err.code === 'sync.version_mismatch';
}

export async function pullFromPeer(
  replica: ReplicaStore,
  transport: PeerTransport,
  options: PullOptions = {},
): Promise<PullReport> {
  const report = emptyReport();
  const pageLimit = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(options.pageLimit ?? MAX_PAGE_EVENTS)));
  const { signal } = options;
  let remote;
  try {
    remote = await transport.versionVector(signal);
  } catch (err) {
    report.errors.push(toHubError(err));
    return report;
  }
  report.reached = true;
  report.peerReplica = remote.replica_id;
  report.remoteVector = remote.version_vector;
  if (remote.replica_id === replica.replicaId) {
    report.errors.push(
      new HubError(
        'sync.peer_failed',
        `the peer has this hub's own replica id ${remote.replica_id}: a copied palace, or this hub listed as its own peer; give the copy a fresh logstream`,
      ),
    );
    return report;
  }

  const plan = pullPlan(replica.versionVector(), remote.version_vector, replica.replicaId).filter(
    (t) => t.origin === remote.replica_id || !options.skipOrigins?.has(t.origin),
  );
  for (const target of plan) {
    const { origin, top } = target;
    let after = target.after;
    let prefetched: { after: number; page: Promise<OpsMessage> } | undefined;
    try {
      while (after < top) {
        signal?.throwIfAborted();
        // Another peer's round may have brought this origin further meanwhile: ask only for the rest.
        after = Math.max(after, replica.versionVector()[origin] ?? 0);
        if (after >= top) break;
        const request =
          prefetched?.after === after ? prefetched.page : transport.ops(origin, after, pageLimit, signal);
        prefetched = undefined;
        const page = await request;
        checkPage(page, origin, after);
        if (page.events.length === 0) {
          report.notes.push(
            `the peer's vector promised ${origin} up to ${top} but it served nothing after ${after}`,
          );
          break;
        }
        const last = page.events.at(-1)?.origin_seq ?? after;
        if (last < top) {
          // Ask for the next page now, so the peer prepares it while this one is being applied.
          const next = transport.ops(origin, last, pageLimit, signal);
          next.catch(() => undefined); // awaited (or dropped) later; never an unhandled rejection
          prefetched = { after: last, page: next };
        }
        // Artifacts before the events that reference them; an event whose artifact cannot be had
        // (missing, or refused by its sha256) ends the page there, and the origin with it.
        let usable = page.events.length;
        let failure: HubError | undefined;
        for (let i = 0; i < page.events.length && !failure; i++) {
          const event = page.events[i];
          if (!event) continue;
          for (const id of event.artifact_ids) {
            if (replica.hasArtifact(id)) continue;
            try {
              const message = await transport.artifact(id, signal);
              if (message.artifact.id !== id)
                throw new HubError(
                  'sync.bad_message',
                  `asked for artifact ${id}, the peer served ${message.artifact.id}`,
                );
              if (replica.applyRemoteArtifact(message.artifact)) report.pulledArtifacts++;
            } catch (err) {
              const e = toHubError(err);
              failure =
                e.code === 'artifact.not_found'
                  ? new HubError(
                      'sync.bad_message',
                      `the peer served event ${event.id} but not its artifact ${id}`,
                    )
                  : e;
              usable = i;
              break;
            }
          }
        }
        const result = replica.applyRemoteEvents(page.events.slice(0, usable));
        report.pulledEvents += result.applied;
        report.duplicates += result.duplicates;
        if (result.applied > 0) report.perOrigin[origin] = (report.perOrigin[origin] ?? 0) + result.applied;
        if (result.failed) failure = result.failed.error;
        if (failure) throw failure;
        after = last;
      }
    } catch (err) {
      const e = toHubError(err);
      if (signal?.aborted) {
        report.errors.push(
          new HubError('sync.peer_failed', 'the round was stopped (the hub is closing)', { cause: err }),
        );
        return report;
      }
      report.errors.push(
        isTransportFailure(e)
          ? e
          : new HubError(e.code, `origin ${origin}: ${e.message}`, {
              cause: e,
              ...(e.data ? { data: e.data } : {}),
            }),
      );
      if (isTransportFailure(e)) return report;
    }
  }
  return report;
}
