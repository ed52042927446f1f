// What `palace sync` (also `palace logstream sync`) runs, loaded only when it runs: one peer-sync round now, against peers.json or one
// `--peer URL` (its token from PALACE_SYNC_PEER_TOKEN, never argv). With a live writer hub the hub
// runs the round (POST /sync/round), so its waiters wake and its mesh estate records it; otherwise
// the round runs against the palace's log directly. Exit 1 when any peer failed. `palace sync trust
// <url>` prints a peer's replica id, public key and fingerprint to confirm, and with --pin writes the
// key into peers.json (docs/sync-trust.md).

import { renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

import { ERROR_CODES, HubError, invalid, type ErrorCode } from '../../hub/src/errors.js';
import { makeLogger } from '../../hub/src/log.js';
import {
  canonicalPalace,
  dialUrl,
  readLiveRegistration,
  hubTokens,
} from '../../hub/src/registration.js';
import { localEstate } from '../../hub/src/sync/mesh-estate.js';
import { createHttpPeerTransport } from '../../hub/src/sync/http-peer-transport.js';
import {
  parsePeerEntry,
  parsePeersFile,
  peersFilePath,
  readPeersText,
  type PeerEntry,
} from '../../hub/src/sync/peers-file.js';
import { fingerprint } from '../../hub/src/logstream/signatures.js';
import { parseMessage, type MeshMessage, type RoundMessage } from '../../hub/src/sync/protocol.js';
import { SyncService } from '../../hub/src/sync/sync-service.js';
import { syncPeerToken } from '../config.js';
import { withLogstream, type CommandContext } from '../context.js';
import { EXIT } from '../output.js';

const HUB_ROUND_TIMEOUT_MS = 600_000;

function adHocPeer(ctx: CommandContext): PeerEntry | undefined {
  const url = ctx.opts.peer;
  if (typeof url !== 'string') return undefined;
  const token = syncPeerToken();
  try {
    return parsePeerEntry({
      url,
      name: typeof ctx.opts.name === 'string' ? ctx.opts.name : undefined,
      token,
    });
  } catch (err) {
    throw invalid('--peer', `--peer: ${(err as Error).message}`);
  }
}

/** Calls the live hub; undefined when it cannot be reached (the caller then works directly). */
async function askHub<T extends 'round' | 'mesh'>(
  ctx: CommandContext,
  type: T,
  init: { method: 'GET' | 'POST'; path: string; body?: unknown },
): Promise<(T extends 'round' ? RoundMessage : MeshMessage) | undefined> {
  const palace = canonicalPalace(ctx.config.palacePath);
  const live = readLiveRegistration(ctx.config.home, palace);
  if (!live || (init.method === 'POST' && live.read_only)) return undefined;
  const tokens = hubTokens(ctx.config.home, palace, ctx.config.httpToken);
  let response: Response | undefined;
  for (const token of tokens.length > 0 ? tokens : [undefined]) {
    try {
      response = await fetch(`${dialUrl(live)}${init.path}`, {
        method: init.method,
        headers: {
          Accept: 'application/json',
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: AbortSignal.timeout(HUB_ROUND_TIMEOUT_MS),
      });
    } catch {
      ctx.out.note(`The hub at ${dialUrl(live)} does not answer; working on the palace directly.`);
      return undefined;
    }
    if (response.status !== 401) break;
  }
  if (!response) return undefined;
  const value: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const error = (value as { error?: { code?: string; message?: string } } | undefined)?.error;
    const code: ErrorCode =
      error?.code && error.code in ERROR_CODES ? (error.code as ErrorCode) : 'hub.unreachable';
    throw new HubError(code, error?.message ?? `the hub answered HTTP ${response.status}`);
  }
  return parseMessage(type, value) as T extends 'round' ? RoundMessage : MeshMessage;
}

function roundText(round: RoundMessage, via: string): string {
  const lines = [`Sync round ${via} (this replica ${round.replica_id}):`];
  for (const r of round.results) {
    if (r.ok)
      lines.push(
        `  ${r.peer_name} (${r.peer_replica ?? '?'}): +${r.pulled_events} events, +${r.pulled_artifacts} artifacts`,
      );
    else
      lines.push(
        `  ${r.peer_name}: ERROR ${r.error?.message ?? 'failed'}` +
          (r.pulled_events + r.pulled_artifacts > 0
            ? ` (after +${r.pulled_events} events, +${r.pulled_artifacts} artifacts)`
            : ''),
      );
    for (const note of r.notes) lines.push(`    note: ${note}`);
  }
  return lines.join('\n');
}

function estateText(m: MeshMessage): string {
  const lines = [
    `${m.self.name} ${m.self.replica_id} (${m.estate_source === 'hub' ? 'live hub' : 'no hub running'}; interval ${m.sync_interval_s} s${m.sync_enabled ? '' : ', loop off'})`,
    `  key: ${m.self.public_key_fingerprint}`,
    `  holds: ${
      Object.entries(m.self.version_vector)
        .map(([o, n]) => `${o}@${n}`)
        .join(' ') || 'nothing yet'
    }`,
  ];
  if (m.peers_file.error) lines.push(`  peers.json: ${m.peers_file.error}`);
  if (m.peers.length === 0) lines.push(`  no peers (${m.peers_file.path})`);
  for (const p of m.peers) {
    const state = p.reachable === null ? 'not tried yet' : p.reachable ? 'reachable' : 'unreachable';
    lines.push(
      `  ${p.name} ${p.url}${p.replica_id ? ` ${p.replica_id}` : ''}: ${state}; last success ${p.last_success_at ?? 'never'}; pulled ${p.pulled_events_total} events`,
    );
    lines.push(`    key: ${p.public_key_fingerprint ?? 'not seen yet'} (${p.trust === 'pinned' ? 'pinned' : p.trust === 'tofu' ? 'NOT pinned: trusted on first use' : 'unknown'})`);
    if (p.memory_wings?.length) lines.push(`    memory: wings ${p.memory_wings.join(', ')} replicate with this peer`);
    if (p.last_error) lines.push(`    last error (${p.last_error_at}): ${p.last_error}`);
    for (const r of p.rejected_pages.slice(0, 3)) lines.push(`    refused (${r.at}): ${r.reason}`);
  }
  if (m.gossip_origins.length > 0) lines.push(`  known through gossip: ${m.gossip_origins.join(' ')}`);
  for (const e of m.equivocations ?? [])
    lines.push(
      `  EQUIVOCATION: origin ${e.origin} signed two chains at position ${e.pos} (held ${e.ours_chain.slice(0, 12)}…, peer ${e.via_peer ?? '?'} showed ${e.theirs_chain.slice(0, 12)}…; key ${e.public_key_fingerprint}, ${e.detected_at}): its events are no longer accepted; both statements are kept`,
    );
  for (const q of m.quarantined ?? [])
    lines.push(
      `  quarantined: ${q.events} event(s) that claimed origin ${q.origin}, signed by ${q.public_key_fingerprint} (not its pinned key), held as ${q.held_as} since ${q.quarantined_at}: kept, not served`,
    );
  for (const [origin, n] of Object.entries(m.self.unverified_events))
    lines.push(`  legacy: ${n} event(s) of ${origin} held from before signed sync, not yet covered by its signature`);
  return lines.join('\n');
}

/** `palace sync trust <url>`: what the peer presents, to confirm out of band; --pin records it in peers.json. */
export async function runTrust(ctx: CommandContext, rawUrl: string): Promise<number> {
  const entry = (() => {
    try {
      return parsePeerEntry({ url: rawUrl, name: typeof ctx.opts.name === 'string' ? ctx.opts.name : undefined });
    } catch (err) {
      throw invalid('url', (err as Error).message);
    }
  })();
  const transport = createHttpPeerTransport({ url: entry.url, token: syncPeerToken(), name: entry.name });
  const vv = await transport.versionVector();
  const result = {
    url: entry.url,
    name: vv.name,
    replica_id: vv.replica_id,
    public_key: vv.public_key,
    fingerprint: fingerprint(vv.public_key),
    pinned: false,
  };
  if (ctx.opts.pin) {
    const path = peersFilePath(ctx.config.palacePath);
    const text = readPeersText(path);
    const file = (text === null ? { peers: [] } : JSON.parse(text)) as { peers: Array<Record<string, unknown>> };
    const name = typeof ctx.opts.name === 'string' ? ctx.opts.name : entry.name;
    const existing = file.peers.find((p) => p.url === entry.url || p.url === rawUrl || p.name === name);
    const pin = { public_key: vv.public_key, replica_id: vv.replica_id };
    if (existing) Object.assign(existing, pin);
    else file.peers.push({ name, url: entry.url, ...pin });
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
    result.pinned = true;
  }
  ctx.out.result(result, () =>
    [
      `Peer ${entry.url} presents:`,
      `  name        ${result.name}`,
      `  replica_id  ${result.replica_id}`,
      `  public_key  ${result.public_key}`,
      `  fingerprint ${result.fingerprint}`,
      result.pinned
        ? `Pinned in ${peersFilePath(ctx.config.palacePath)}.`
        : `Confirm the fingerprint with the peer's owner (\`palace sync --status\` on that machine prints it), then pin it:\n  palace sync trust ${entry.url} --pin   (or add "public_key": "${result.public_key}" to its peers.json entry)`,
    ].join('\n'),
  );
  return EXIT.ok;
}

/**
 * `palace sync share <wing> --with <peer> [--stop]`: adds the wing to (or removes it from) the peer's
 * "wings" in peers.json (docs/memory-replication.md); `--kg` sets (or clears) the peer's "kg": true,
 * the knowledge graph's facts. A running hub picks the change up at once.
 */
export function runShare(ctx: CommandContext, rawWing: string | undefined): number {
  const kg = ctx.opts.kg === true;
  if (rawWing === undefined && !kg) throw invalid('wing', 'name the wing to share (palace sync share <wing> --with <peer>), or pass --kg to share the knowledge graph');
  const wing = rawWing?.trim();
  if (wing !== undefined && (wing === '' || wing.length > 128)) throw invalid('wing', 'the wing must be a name of 1-128 characters');
  if (wing?.startsWith('#')) throw invalid('wing', `'${wing}' is not a wing name (a wing never starts with '#'); to share the knowledge graph, pass --kg`);
  const who = typeof ctx.opts.with === 'string' ? ctx.opts.with.trim() : '';
  const path = peersFilePath(ctx.config.palacePath);
  const text = readPeersText(path);
  const peers = text === null ? [] : parsePeersFile(text, path);
  const peer = peers.find((p) => p.name === who || p.url === who || p.url === who.replace(/\/+$/, ''));
  if (!peer)
    throw new HubError(
      'sync.no_peers',
      `no peer '${who}' in ${path}${peers.length > 0 ? ` (peers: ${peers.map((p) => p.name).join(', ')})` : ''}; add it first: palace sync trust <url> --pin --name ${who || '<name>'}`,
      { field: 'with' },
    );
  const file = JSON.parse(text ?? '{"peers":[]}') as { peers: Array<Record<string, unknown>> };
  const entry = file.peers.find((p) => (typeof p.name === 'string' ? p.name.trim() : undefined) === peer.name || p.url === peer.url || p.url === `${peer.url}/`);
  if (!entry) throw new HubError('internal', `peer '${peer.name}' vanished from ${path}`);
  const before = new Set(peer.wings ?? []);
  const after = new Set(before);
  if (wing !== undefined) {
    if (ctx.opts.stop) after.delete(wing);
    else after.add(wing);
  }
  if (after.size > 0) entry.wings = [...after];
  else delete entry.wings;
  const kgBefore = peer.kg === true;
  const kgAfter = kg ? !ctx.opts.stop : kgBefore;
  if (kgAfter) entry.kg = true;
  else delete entry.kg;
  const next = JSON.stringify(file, null, 2) + '\n';
  parsePeersFile(next, path); // never write a file the hub would refuse
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, next, { mode: 0o600 });
  renameSync(tmp, path);
  const result = {
    peer: peer.name,
    ...(wing !== undefined ? { wing } : {}),
    shared: !ctx.opts.stop,
    wings: [...after],
    kg: kgAfter,
    changed: before.size !== after.size || kgBefore !== kgAfter,
  };
  const what = [...(wing !== undefined ? [`Wing '${wing}'`] : []), ...(kg ? ['The knowledge graph'] : [])].join(' and ');
  const shared = [...result.wings, ...(kgAfter ? ['the knowledge graph'] : [])];
  ctx.out.result(result, () =>
    [
      result.shared
        ? `${what} replicate${wing !== undefined && kg ? '' : 's'} with '${peer.name}'${result.changed ? '' : ' (already did)'}: ${kg && wing === undefined ? 'facts stated or closed here go to that hub and theirs come here' : 'its drawers go to that hub and theirs come here'}, signed and verified.`
        : `${what} no longer replicate${wing !== undefined && kg ? '' : 's'} with '${peer.name}'${result.changed ? '' : ' (it did not)'}; what was replicated stays.`,
      `Shared with '${peer.name}': ${shared.length > 0 ? shared.join(', ') : 'nothing'}.`,
      ...(peer.publicKey ? [] : [`Peer '${peer.name}' is not pinned: pin it (palace sync trust ${peer.url} --pin) so its feeds are verified with a key you confirmed.`]),
      `The peer must share ${wing !== undefined ? `'${wing}'` : 'the knowledge graph'}${wing !== undefined && kg ? ' and the knowledge graph' : ''} with this hub too (and name it by replica_id or pinned key in its peers.json).`,
    ].join('\n'),
  );
  return EXIT.ok;
}

function timeoutOf(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1 || n > 600_000)
    throw invalid('--timeout-ms', '--timeout-ms must be a number of milliseconds from 1 to 600000');
  return n;
}

export async function runSync(ctx: CommandContext): Promise<number> {
  const peer = adHocPeer(ctx);
  const timeoutMs = timeoutOf(ctx.opts.timeoutMs);
  if (ctx.opts.status) {
    const live = ctx.opts.direct
      ? undefined
      : await askHub(ctx, 'mesh', { method: 'GET', path: '/sync/peers' });
    const estate =
      live ??
      (await withLogstream(ctx, (ls) =>
        localEstate(ls.store.replica, {
          palacePath: ctx.config.palacePath,
          name: hostname(),
          intervalSeconds: ctx.config.syncIntervalSeconds,
        }),
      ));
    ctx.out.result(estate, () => estateText(estate));
    return EXIT.ok;
  }
  let round = ctx.opts.direct
    ? undefined
    : await askHub(ctx, 'round', { method: 'POST', path: '/sync/round', body: peer ? { peer } : {} });
  const via = round ? 'through the live hub' : 'directly on the palace';
  round ??= await withLogstream(ctx, async (ls) => {
    const service = new SyncService({
      replica: ls.store.replica,
      palacePath: ctx.config.palacePath,
      name: hostname(),
      intervalSeconds: 0,
      log: makeLogger('palace:sync', { level: 'error' }),
      watchFile: false,
      verify: ctx.config.syncVerify,
      stallMs: ctx.config.syncStallMs,
      ...(timeoutMs === undefined ? {} : { requestTimeoutMs: timeoutMs }),
    });
    try {
      return { ...(await service.runRound(peer ? [peer] : undefined)), source: 'direct' as const };
    } finally {
      await service.stop();
    }
  });
  ctx.out.result(round, () => roundText(round, via));
  return round.results.every((r) => r.ok) ? EXIT.ok : EXIT.error;
}

