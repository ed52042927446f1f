// IdentityService.bind (issue 28) on a real agents file in a temp palace: the writer is filled in
// for a proven agent and another name refused; registered names need their secret; reserved names
// and hub-only event types are refused; enforced mode refuses unregistered names but the desk's.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { HubError } from '../../hub/src/errors.js';
import { ANONYMOUS, OPERATOR, createIdentityService, type Caller } from '../../hub/src/identity/identity.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function service(mode: 'open' | 'enforced' = 'open', hubToken = false) {
  const dir = mkdtempSync(join(tmpdir(), 'palace-identity-unit-'));
  dirs.push(dir);
  return createIdentityService({ palacePath: dir, mode, hubToken });
}

const DECLARED = new Set(['type', 'stream', 'room', 'from_agent', 'body']);
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as HubError).code;
  }
  return 'accepted';
};

describe('IdentityService.bind', () => {
  it('fills in and checks the writer of a proven agent', () => {
    const id = service();
    const { secret } = id.registry.add('box-codex', { capabilities: ['write'] });
    const caller: Caller = id.agentOf(secret);
    expect(id.bind('palace_event_append', DECLARED, { type: 'note' }, caller)).toMatchObject({ from_agent: 'box-codex' });
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: 'other' }, caller))).toBe('identity.mismatch');
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: 'box-codex' }, ANONYMOUS))).toBe('identity.unproven');
    id.registry.revoke('box-codex');
    expect(codeOf(() => id.agentOf(secret))).toBe('identity.unproven');
  });

  it('refuses reserved names and hub-only types; the operator writes as the desk when it names nobody', () => {
    const id = service('open', true);
    for (const name of ['hub', 'HUB', 'hub:sweeper', 'rep_0a1b2c', 'system', '*'])
      expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: name }, OPERATOR))).toBe('identity.reserved');
    for (const type of ['claim.expired', 'claim.renewed', 'event.ack', 'file.reserved', 'file.released', 'agent.retired'])
      expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type, from_agent: 'x' }, ANONYMOUS))).toBe('event.hub_only');
    expect(id.bind('palace_event_append', DECLARED, { type: 'note' }, OPERATOR, new Set(['from_agent']))).toMatchObject({ from_agent: 'human' });
    // An optional writer field keeps the tool's own default for the operator.
    expect(id.bind('palace_add_drawer', new Set(['content', 'created_by']), { content: 'c' }, OPERATOR)).toEqual({ content: 'c' });
    expect(id.isDesk(OPERATOR, 'anyone')).toBe(true);
    expect(id.isDesk(ANONYMOUS, 'human')).toBe(false); // a hub with a token has no anonymous desk
  });

  it('enforced: refuses unregistered names, lets the hub token write only as human', () => {
    const id = service('enforced', true);
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: 'stranger' }, ANONYMOUS))).toBe('identity.unregistered');
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: 'stranger' }, OPERATOR))).toBe('identity.unregistered');
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note', from_agent: 'human' }, OPERATOR))).toBe('accepted');
    expect(codeOf(() => id.bind('palace_event_append', DECLARED, { type: 'note' }, ANONYMOUS))).toBe('identity.unproven');
    expect(codeOf(() => id.registry.add('human'))).toBe('identity.reserved');
  });
});
