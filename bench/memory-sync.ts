// The `memory-sync` benchmark suite (issue 34): two real hubs (`palace serve` children), the
// puller dialing the source through a byte-counting proxy. N drawers (PALACE_BENCH_MEMSYNC_DRAWERS,
// default 10,000) are filed in a shared wing on the source; then one round is started on the second
// hub and we time until its search finds the last drawer (vectors shipped: same embedder), against
// the same run's time for the second hub to embed those N drawers itself (what a different embedder
// costs). Bytes on the wire per drawer are counted at the proxy, against the drawer's raw size
// (content plus its float32 vector).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { connectSdkClient, sdkCall } from './hub-clients.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { sleep } from './stats.js';
import { startMeshHub, stopMeshHub, type MeshHub } from './sync-mesh.js';

function drawerCount(): number {
  const raw = process.env.PALACE_BENCH_MEMSYNC_DRAWERS?.trim();
  const n = raw ? Number(raw) : 10_000;
  if (!Number.isInteger(n) || n < 10) throw new Error(`PALACE_BENCH_MEMSYNC_DRAWERS must be a whole number ≥ 10, not '${raw}'`);
  return n;
}

const SYNC_INTERVAL_S = 15; // the default PALACE_SYNC_INTERVAL: the target is one interval plus 10 s

function content(i: number): string {
  return `Decision ${i}: module m${i} keeps its cache for ${i % 97} minutes and retries ${i % 7} times before it reports the failure to the on-call engineer.`;
}

async function versionVector(hub: MeshHub): Promise<{ replica_id: string; public_key: string }> {
  return (await (await fetch(`${hub.url}/sync/version_vector`)).json()) as { replica_id: string; public_key: string };
}

function writePeers(hub: MeshHub, peer: { name: string; url: string; replica_id: string; public_key: string }): void {
  writeFileSync(join(hub.palace, 'peers.json'), JSON.stringify({ peers: [{ ...peer, wings: ['team'] }] }), { mode: 0o600 });
}

async function found(client: Client, i: number): Promise<boolean> {
  const r = await sdkCall<{ results: Array<{ content: string }> }>(client, 'palace_search', { query: `decision ${i} module m${i} cache`, wing: 'team', limit: 3 });
  return r.results.some((h) => h.content === content(i));
}

export const memorySyncSuite: Suite = {
  name: 'memory-sync',
  title: 'Memory replication: a shared wing searchable on a second hub',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const n = drawerCount();
    const root = mkdtempSync(join(tmpdir(), 'palace-bench-memsync-'));
    const hubs: MeshHub[] = [];
    try {
      const [a, b] = await Promise.all([startMeshHub(root, 'a', 0), startMeshHub(root, 'b', 0)]);
      if (!a || !b) throw new Error('hubs did not start');
      hubs.push(a, b);
      const [va, vb] = await Promise.all([versionVector(a), versionVector(b)]);
      writePeers(a, { name: 'b', url: b.proxyUrl, ...vb });
      writePeers(b, { name: 'a', url: a.proxyUrl, ...va });
      const ca = await connectSdkClient(a.url, 'bench-a');
      const cb = await connectSdkClient(b.url, 'bench-b');
      for (let i = 0; i < n; i += 100) {
        const items = Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ wing: 'team', room: `r${(i + j) % 20}`, content: content(i + j), force: true }));
        await sdkCall(ca, 'palace_add_drawers', { items }, 600_000);
        ctx.progress(`filed ${Math.min(n, i + 100)}/${n} drawers on hub a`);
      }
      // Reference: hub b embedding the same drawers itself (another wing, not shared), in this run.
      await sdkCall(cb, 'palace_status', { include_memory: true }, 120_000); // model loaded before timing
      const refStart = performance.now();
      for (let i = 0; i < n; i += 100) {
        const items = Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ wing: 'local', room: 'ref', content: `${content(i + j)} (local copy)`, force: true }));
        await sdkCall(cb, 'palace_add_drawers', { items }, 600_000);
      }
      const embedMs = performance.now() - refStart;
      ctx.progress('reference done; pulling');
      const bytesBefore = a.proxy.bytes();
      const start = performance.now();
      const round = (await (await fetch(`${b.url}/sync/round`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).json()) as {
        results: Array<{ ok: boolean; error: unknown; memory?: { applied: number } }>;
      };
      if (!round.results[0]?.ok) throw new Error(`round failed: ${JSON.stringify(round.results[0]?.error)}`);
      while (!(await found(cb, n - 1))) {
        if (performance.now() - start > 30 * 60_000) throw new Error('the last drawer never became searchable');
        await sleep(100);
      }
      const searchableMs = performance.now() - start;
      const wire = a.proxy.bytes() - bytesBefore;
      const dims = ((await sdkCall<{ memory: { embedder?: { dimensions: number } } }>(cb, 'palace_status', { include_memory: true })).memory.embedder?.dimensions) ?? 512;
      const rawPerDrawer = Buffer.byteLength(content(n / 2), 'utf8') + 4 * dims;
      await Promise.all([ca.close(), cb.close()]);
      const size = n === 10_000 ? '10k' : n.toLocaleString('en-US');
      const figures: Figure[] = [
        {
          name: `${size} drawers searchable on a 2nd hub, vectors shipped (from round start)`,
          value: searchableMs,
          unit: 'ms',
          reference: { value: embedMs, label: `the 2nd hub embedding the same ${size} drawers itself (a different embedder's cost), same run`, measured: true },
          target: { op: '<=', value: (SYNC_INTERVAL_S + 10) * 1000, note: 'one sync interval (15 s default) plus 10 s (issue 34)' },
        },
        {
          name: 'bytes on the wire per replicated drawer',
          value: wire / n,
          unit: 'B',
          reference: { value: rawPerDrawer, label: `one drawer's content plus its ${dims}-d float32 vector, uncompressed`, measured: true },
        },
      ];
      return {
        figures,
        notes: [
          `${n} drawers in one shared wing, pulled in one round (${round.results[0]?.memory?.applied ?? 0} applied); the background loop adds up to one PALACE_SYNC_INTERVAL before a round starts.`,
          'Bytes counted at a TCP proxy in front of the source hub: request and response, gzip as served, the log round included.',
        ],
        ...(n === 10_000 ? {} : { smoke: `PALACE_BENCH_MEMSYNC_DRAWERS=${n}` }),
      };
    } finally {
      for (const h of hubs) await stopMeshHub(h).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    }
  },
};
