// Which era a JSON-RPC message is (hub/src/mcp/server/era.ts): `palace mcp` and /mcp sort every
// frame with it, so a 2025 client is never answered in the 2026 shape and the reverse.

import { describe, expect, it } from 'vitest';

import { eraOf, isModernVersion } from '../../hub/src/mcp/server/era.js';

const meta = (version: unknown) => ({ _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {} } });

describe('eraOf', () => {
  it('is modern for server/discover, a 2026 (or later) version in _meta, or a 2026 header without one', () => {
    expect(eraOf({ method: 'server/discover' })).toBe('modern');
    expect(eraOf({ method: 'tools/list', params: meta('2026-07-28') })).toBe('modern');
    expect(eraOf({ method: 'tools/list', params: meta('2027-01-01') })).toBe('modern');
    expect(eraOf({ method: 'tools/list', params: {} }, '2026-07-28')).toBe('modern');
  });

  it('is legacy for initialize whatever it offers, for 2025 versions, and for no version at all', () => {
    expect(eraOf({ method: 'initialize', params: { protocolVersion: '2026-07-28', ...meta('2026-07-28') } })).toBe('legacy');
    expect(eraOf({ method: 'tools/list', params: meta('2025-11-25') }, '2026-07-28')).toBe('legacy');
    expect(eraOf({ method: 'tools/call', params: { name: 'x' } })).toBe('legacy');
    expect(eraOf({ method: 'tools/call' }, '2025-11-25')).toBe('legacy');
  });

  it('never takes a malformed version for a modern one', () => {
    for (const v of [undefined, null, 20260728, '2026-7-28', '2026-07-28x', 'latest', ''])
      expect(isModernVersion(v), String(v)).toBe(false);
    expect(eraOf({ method: 'tools/list', params: { _meta: 'not an object' } })).toBe('legacy');
  });
});
