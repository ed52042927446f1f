// The registered agents of one palace: `agents.json` in the palace folder (mode 0600) holding, per
// agent, only the sha256 of its secret, its capabilities and harness, and when it was rotated,
// revoked or retired. The secret itself is returned once by add/rotate and never stored or logged.
// The hub re-reads the file when it changes (the CLI writes it while a hub runs).

import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from '../atomic-file.js';
import { capabilityList } from '../core/capabilities.js';
import { HubError } from '../errors.js';
import { checkRegistrableName } from './names.js';

export const AGENTS_FILE = 'agents.json';
export { CAPABILITIES, capabilityList, type Capability } from '../core/capabilities.js';
/** Every secret starts with this, so a leaked one is recognisable (and never mistaken for a hub token). */
export const SECRET_PREFIX = 'pat_';

export interface AgentRecord {
  name: string;
  /** sha256 (hex) of the secret; the secret is never stored. */
  secret_sha256: string;
  capabilities: string[];
  harness: string | null;
  created_at: string;
  rotated_at: string | null;
  revoked_at: string | null;
  retired_at: string | null;
  retired_by: string | null;
}

/** An agent as listed (no hash). */
export type AgentInfo = Omit<AgentRecord, 'secret_sha256'> & { state: 'active' | 'revoked' | 'retired' };

export interface AgentRegistry {
  /** The palace's agents file. */
  readonly path: string;
  /** Registers a name; returns its secret (shown once). */
  add(name: string, options?: { capabilities?: readonly string[]; harness?: string | null }): { agent: AgentInfo; secret: string };
  /** A new secret for a registered agent (the old one stops working at once); a revoked one is active again. */
  rotate(name: string): { agent: AgentInfo; secret: string };
  /** The secret stops working; the name stays registered (nobody can use it without a new secret). */
  revoke(name: string): AgentInfo;
  /** Revoked for good and marked retired by `by` (the hub also releases what it held: retire tool). */
  retire(name: string, by: string): AgentInfo;
  list(): AgentInfo[];
  /** A registered name (in any state), or undefined. */
  get(name: string): AgentInfo | undefined;
  /** The active agent whose secret this is, or undefined. */
  bySecret(secret: string): AgentInfo | undefined;
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function stateOf(r: AgentRecord): AgentInfo['state'] {
  return r.retired_at ? 'retired' : r.revoked_at ? 'revoked' : 'active';
}

function info(r: AgentRecord): AgentInfo {
  const { secret_sha256: _hash, ...rest } = r;
  return { ...rest, state: stateOf(r) };
}

interface Loaded {
  key: string;
  records: AgentRecord[];
  byHash: Map<string, AgentRecord>;
  byName: Map<string, AgentRecord>;
}

/** The agents of the palace at `palaceDir` (the file is read lazily and re-read when it changes). */
export function createAgentRegistry(palaceDir: string, now: () => Date = () => new Date()): AgentRegistry {
  const path = join(palaceDir, AGENTS_FILE);
  let loaded: Loaded | undefined;

  const fileKey = (): string => {
    try {
      const st = statSync(path);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'none';
    }
  };
  const load = (): Loaded => {
    const key = fileKey();
    if (loaded?.key === key) return loaded;
    let records: AgentRecord[] = [];
    if (key !== 'none') {
      try {
        const parsed = JSON.parse(readFileSync(path, 'utf8')) as { agents?: unknown };
        records = Array.isArray(parsed.agents) ? (parsed.agents as AgentRecord[]).filter((a) => typeof a?.name === 'string' && typeof a.secret_sha256 === 'string') : [];
      } catch (err) {
        throw new HubError('hub.config', `${path} is not a readable agents file: ${(err as Error).message}`, { cause: err });
      }
    }
    loaded = {
      key,
      records,
      byHash: new Map(records.filter((r) => stateOf(r) === 'active').map((r) => [r.secret_sha256, r])),
      byName: new Map(records.map((r) => [r.name, r])),
    };
    return loaded;
  };
  const save = (records: AgentRecord[]): void => {
    writeFileAtomic(path, `${JSON.stringify({ agents: records }, null, 2)}\n`, 0o600);
    if (existsSync(path)) chmodSync(path, 0o600);
    loaded = undefined;
  };
  const find = (name: string): AgentRecord => {
    const r = load().byName.get(name);
    if (!r) throw new HubError('agent.not_found', `no registered agent '${name}' (palace agent list)`, { field: 'name' });
    return r;
  };
  const update = (name: string, change: (r: AgentRecord) => AgentRecord): AgentRecord => {
    find(name);
    const records = load().records.map((r) => (r.name === name ? change(r) : r));
    save(records);
    return records.find((r) => r.name === name) as AgentRecord;
  };
  const iso = (): string => now().toISOString();

  return {
    path,
    add(name, options = {}) {
      checkRegistrableName(name);
      if (load().byName.has(name))
        throw new HubError('agent.exists', `'${name}' is already registered; palace agent rotate ${name} issues a new secret`, { field: 'name' });
      const secret = newSecret();
      const record: AgentRecord = {
        name,
        secret_sha256: secretHash(secret),
        capabilities: capabilityList('capabilities', options.capabilities),
        harness: options.harness?.trim() || null,
        created_at: iso(),
        rotated_at: null,
        revoked_at: null,
        retired_at: null,
        retired_by: null,
      };
      save([...load().records, record]);
      return { agent: info(record), secret };
    },
    rotate(name) {
      const secret = newSecret();
      const r = update(name, (old) => {
        if (old.retired_at) throw new HubError('agent.not_found', `'${name}' was retired; register a new name`, { field: 'name' });
        return { ...old, secret_sha256: secretHash(secret), rotated_at: iso(), revoked_at: null };
      });
      return { agent: info(r), secret };
    },
    revoke(name) {
      return info(update(name, (old) => ({ ...old, revoked_at: old.revoked_at ?? iso() })));
    },
    retire(name, by) {
      return info(update(name, (old) => ({ ...old, revoked_at: old.revoked_at ?? iso(), retired_at: old.retired_at ?? iso(), retired_by: old.retired_by ?? by })));
    },
    list: () => load().records.map(info),
    get(name) {
      const r = load().byName.get(name);
      return r ? info(r) : undefined;
    },
    bySecret(secret) {
      if (!secret.startsWith(SECRET_PREFIX)) return undefined;
      const r = load().byHash.get(secretHash(secret));
      return r ? info(r) : undefined;
    },
  };
}
