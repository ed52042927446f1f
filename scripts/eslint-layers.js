// The `palace/layers` lint rule: hub/src modules import only from their own layer or below, the
// browser-safe hub client only from core/, hub code never from cli/, and the CLI only from the hub
// modules it is allowed (its composition root, the client, tools and the base modules).

import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * hub/src, lowest layer first. A unit is a directory under hub/src or a top-level module (no .ts).
 * Units in one layer may import each other; nothing imports from a higher layer.
 */
export const HUB_LAYERS = [
  ['core', 'errors'],
  ['version', 'log', 'config', 'atomic-file', 'sqlite-user-version', 'sqlite-statements', 'compiled-script', 'registration', 'lease', 'request-lock', 'request-stats', 'client-config', 'launcher', 'background-gate'],
  ['vector', 'embed', 'logstream', 'kg'],
  ['search'],
  ['memory'],
  ['mine', 'sync', 'migrate', 'identity'],
  ['services', 'palace', 'status'],
  ['mcp'],
  ['http'],
  ['server', 'main'],
];

/** The hub units any CLI module may import at run time (type-only imports are free: they load nothing). */
export const CLI_ALLOWED = ['client', 'core', 'errors', 'version', 'log', 'config', 'registration', 'lease', 'client-config', 'palace', 'mcp'];

/**
 * Admin commands that work on the palace's stores offline (mining, migration, re-embedding, repair):
 * the extra hub units each may import. Everyday commands (logstream, artifact, hook, watch, daemon,
 * memory, kg, diary, ...) get none: they go through the hub client or the in-process MCP server.
 */
export const CLI_EXCEPTIONS = {
  // Per-agent credentials: `palace agent` edits the palace's agents file (secrets are shown on this
  // terminal, never sent through MCP); the in-process roads check PALACE_AGENT_TOKEN against it.
  'cli/commands/agent.ts': ['identity'],
  'cli/stdio-proxy.ts': ['identity'],
  'cli/tool-runner.ts': ['identity'],
  // `palace serve` starts the hub in this process.
  'cli/commands/serve.ts': ['main'],
  // The bind policy check before a daemon install names the same loopback rule the hub applies.
  'cli/commands/daemon.ts': ['http'],
  // The default wing name a hook or `init` files under, and init's project detection.
  'cli/commands/hook.ts': ['mine'],
  'cli/commands/init.ts': ['mine'],
  // `hook inbox` with no live hub reads the log read-only itself: a prompt hook must stay near node's
  // start-up time, and the in-process MCP road opens the whole palace per call (measured ~5x node -e 0
  // per call). With a live hub it goes through palace_event_list like every other command.
  'cli/hook-inbox.ts': ['logstream'],
  // The timeline cap (a constant); offline Cypher over the knowledge graph when no hub runs.
  'cli/commands/kg.ts': ['kg'],
  'cli/commands/cypher.ts': ['kg'],
  // Offline admin over the stores themselves.
  'cli/commands/mine.ts': ['mine'],
  'cli/commands/migrate.ts': ['logstream', 'memory', 'migrate'],
  'cli/commands/migrate-to-postgres.ts': ['embed', 'memory'],
  'cli/commands/repair.ts': ['embed', 'memory'],
  'cli/commands/set-embedder.ts': ['embed', 'memory'],
  'cli/commands/sync-run.ts': ['logstream', 'sync'],
  // withLogstream(): the direct logstream road, kept only for the offline admin commands (repair, sync-run);
  // every everyday logstream command (watch, task and tasks included) goes through runTool().
  'cli/context.ts': ['logstream'],
};

const RANK = new Map(HUB_LAYERS.flatMap((units, rank) => units.map((u) => [u, rank])));

/**
 * hub/src/logstream, file by file, lowest level first: the SQLite log and its parts, then coordination
 * and task reads, then the Logstream service, then what runs beside it. A file imports only its own
 * level or below, type-only imports included (a type import is how an import circle starts).
 */
export const LOGSTREAM_LEVELS = [
  [
    'append-input', 'build-marker', 'change-feed', 'chain-rows', 'event-store', 'replica-store', 'schema', 'schema-status', 'signatures',
    'signing-key', 'sqlite-rows', 'integrity-check', 'store-core', 'local-append', 'event-queries', 'artifact-store', 'replica-serve',
    'replica-apply', 'sync-evidence', 'event-routes', 'task-table-reads', 'lease-seed-worker', 'lease-seed', 'task-projection', 'task-catch-up', 'reservation-projection', 'projections', 'sqlite-event-store',
  ],
  ['coordination', 'claims', 'reservations', 'task-reads', 'coordination-service', 'prepare-event', 'waits'],
  ['logstream'],
  ['lease-sweeper', 'resource-watch'],
];

const LOGSTREAM_RANK = new Map(LOGSTREAM_LEVELS.flatMap((files, rank) => files.map((f) => [f, rank])));

/** Inside logstream/: the store never imports the services built on it. */
function logstreamVerdict(fromFile, toFile) {
  const name = (file) => /([^/\\]+?)(?:\.ts|\.js)?$/.exec(file)?.[1] ?? file;
  const from = name(fromFile);
  const to = name(toFile);
  const a = LOGSTREAM_RANK.get(from);
  const b = LOGSTREAM_RANK.get(to);
  if (a === undefined) return `hub/src/logstream/${from}.ts has no level: add it to LOGSTREAM_LEVELS in scripts/eslint-layers.js`;
  if (b === undefined) return `hub/src/logstream/${to}.ts has no level: add it to LOGSTREAM_LEVELS in scripts/eslint-layers.js`;
  if (b > a) return `hub/src/logstream/${from}.ts (level ${a}) may not import logstream/${to}.ts (level ${b}): the store does not know the services on it`;
  return undefined;
}

/** 'hub:<unit>', 'cli', or undefined for anything else (tests, bench, node_modules). */
export function unitOf(file) {
  const rel = relative(ROOT, file).split(sep).join('/');
  if (rel.startsWith('cli/')) return 'cli';
  const m = /^hub\/src\/([^/]+?)(?:\.ts|\.js)?(?:\/|$)/.exec(rel);
  if (!m) return undefined;
  return `hub:${m[1]}`;
}

/** The wire contract (types only): the browser-safe client may import it type-only, since it loads nothing. */
const CONTRACT = 'hub/src/mcp/contract';

function verdict(fromFile, fromUnit, toUnit, typeOnly, target) {
  if (!toUnit || toUnit === fromUnit) return undefined;
  if (fromUnit === 'cli') {
    if (toUnit === 'cli' || typeOnly) return undefined;
    const unit = toUnit.slice(4);
    const rel = relative(ROOT, fromFile).split(sep).join('/');
    if (CLI_ALLOWED.includes(unit) || (CLI_EXCEPTIONS[rel] ?? []).includes(unit)) return undefined;
    return `the CLI may not import hub/src/${unit} (allowed: ${CLI_ALLOWED.join(', ')}); go through the hub client or the in-process server (palace.ts)`;
  }
  if (toUnit === 'cli') return 'hub code never imports from cli/';
  const from = fromUnit.slice(4);
  const to = toUnit.slice(4);
  if (from === 'client') {
    if (to === 'core') return undefined;
    const rel = relative(ROOT, target).split(sep).join('/').replace(/\.(js|ts)$/, '');
    if (typeOnly && rel === CONTRACT) return undefined;
    return `hub/src/client runs in the browser too: it imports only core/ (and the wire contract, type-only), not ${to}`;
  }
  if (to === 'client') return undefined;
  const a = RANK.get(from);
  const b = RANK.get(to);
  if (a === undefined) return `hub/src/${from} has no layer: add it to HUB_LAYERS in scripts/eslint-layers.js`;
  if (b === undefined) return `hub/src/${to} has no layer: add it to HUB_LAYERS in scripts/eslint-layers.js`;
  if (b > a) return `hub/src/${from} (layer ${a}) may not import hub/src/${to} (layer ${b}): layers point down`;
  return undefined;
}

const layersRule = {
  meta: { type: 'problem', schema: [], docs: { description: 'keep the palace layers pointing down' } },
  create(context) {
    const file = context.filename;
    const fromUnit = unitOf(file);
    if (!fromUnit) return {};
    const check = (node, source, typeOnly) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(file), source.value);
      const toUnit = unitOf(target);
      const message = fromUnit === 'hub:logstream' && toUnit === 'hub:logstream' ? logstreamVerdict(file, target) : verdict(file, fromUnit, toUnit, typeOnly, target);
      if (message) context.report({ node: source, message });
    };
    return {
      ImportDeclaration: (node) =>
        check(node, node.source, node.importKind === 'type' || (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'))),
      ExportNamedDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, node.source, false),
    };
  },
};

export const palacePlugin = { rules: { layers: layersRule } };
