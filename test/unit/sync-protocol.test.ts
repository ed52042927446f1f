// The sync wire protocol and peers.json parsing as pure functions: schemas checked at the edge,
// version negotiation, the pull plan, and every way a peers file can be wrong.

import { describe, expect, it } from 'vitest';

import { covers, pullPlan } from '../../hub/src/core/replication.js';
import { HubError } from '../../hub/src/errors.js';
import { parsePeersFile } from '../../hub/src/sync/peers-file.js';
import { PROTOCOL_VERSION, isMessage, parseMessage, requestedProtocol } from '../../hub/src/sync/protocol.js';
import { catchHubError } from '../helpers/errors.js';

const REP_A = 'rep_00000000000a';
const REP_B = 'rep_00000000000b';
const REP_C = 'rep_00000000000c';

describe('protocol messages', () => {
  const vv = {
    type: 'version_vector',
    protocol: PROTOCOL_VERSION,
    replica_id: REP_A,
    name: 'box',
    version_vector: { [REP_A]: 3 },
    public_key: 'A'.repeat(43),
    keys: [],
  };

  it('accepts a well-formed message and strips unknown fields (additive evolution)', () => {
    expect(parseMessage('version_vector', { ...vv, later_field: 1 })).toEqual(vv);
    expect(isMessage('version_vector', vv)).toBe(true);
    expect(isMessage('ops', vv)).toBe(false);
  });

  it('refuses malformed messages with sync.bad_message naming the field', () => {
    const err = catchHubError(() =>
      parseMessage('version_vector', { ...vv, version_vector: { [REP_A]: -1 } }),
    );
    expect(err.code).toBe('sync.bad_message');
    expect(err.message).toContain('version_vector');
    expect(catchHubError(() => parseMessage('version_vector', { ...vv, replica_id: 'me' })).code).toBe(
      'sync.bad_message',
    );
    expect(catchHubError(() => parseMessage('ops', null)).code).toBe('sync.bad_message');
  });

  it('refuses another protocol version with sync.version_mismatch', () => {
    const err = catchHubError(() =>
      parseMessage('version_vector', { ...vv, protocol: PROTOCOL_VERSION + 1 }),
    );
    expect(err.code).toBe('sync.version_mismatch');
    expect(err.data).toEqual({ supported: [PROTOCOL_VERSION] });
  });

  it('reads the protocol header', () => {
    expect(requestedProtocol(undefined)).toBeUndefined();
    expect(requestedProtocol(' 1 ')).toBe(1);
    expect(requestedProtocol('x')).toBeNaN();
  });
});

describe('artifact messages', () => {
  const artifact = {
    id: 'art_20260101T000000_0123456789ab',
    kind: 'test-log',
    created_by: 'box-claude',
    sha256: 'a'.repeat(64),
    size_bytes: 3,
    created_at: '2026-01-01T00:00:00Z',
    origin_replica: REP_A,
    metadata: {},
    content: 'ok\n',
  };
  const message = { type: 'artifact', protocol: PROTOCOL_VERSION, artifact, signature: null };

  it('carries any well-formed kind, as the hub stores it (kind is open)', () => {
    expect(parseMessage('artifact', message).artifact.kind).toBe('test-log');
  });

  it('refuses a kind the hub would refuse', () => {
    expect(catchHubError(() => parseMessage('artifact', { ...message, artifact: { ...artifact, kind: 'Test Log' } })).code).toBe(
      'sync.bad_message',
    );
  });
});

describe('pull plan', () => {
  it('pulls every origin the peer holds beyond us, never our own, in a stable order', () => {
    expect(pullPlan({ [REP_A]: 5, [REP_B]: 2 }, { [REP_A]: 9, [REP_B]: 2, [REP_C]: 4 }, REP_A)).toEqual([
      { origin: REP_C, after: 0, top: 4 },
    ]);
    expect(pullPlan({ [REP_B]: 1 }, { [REP_C]: 4, [REP_B]: 7 }, REP_A)).toEqual([
      { origin: REP_B, after: 1, top: 7 },
      { origin: REP_C, after: 0, top: 4 },
    ]);
    expect(pullPlan({ [REP_B]: 9 }, { [REP_B]: 7 }, REP_A)).toEqual([]);
    expect(covers({ [REP_B]: 9, [REP_C]: 1 }, { [REP_B]: 7 })).toBe(true);
    expect(covers({ [REP_B]: 9 }, { [REP_C]: 1 })).toBe(false);
  });
});

describe('peers.json', () => {
  const path = '/p/peers.json';
  const parse = (value: unknown): ReturnType<typeof parsePeersFile> =>
    parsePeersFile(typeof value === 'string' ? value : JSON.stringify(value), path);

  it('parses peers, normalizing urls, defaulting names to the url and dropping blank tokens', () => {
    expect(
      parse({
        peers: [
          { name: ' office ', url: 'https://office.example:8765/', token: 'abc' },
          { url: 'http://127.0.0.1:9000', token: '' },
        ],
      }),
    ).toEqual([
      { name: 'office', url: 'https://office.example:8765', token: 'abc' },
      { name: 'http://127.0.0.1:9000', url: 'http://127.0.0.1:9000', token: undefined },
    ]);
    expect(parse({ peers: [] })).toEqual([]);
  });

  it.each([
    ['not json', '{"peers": ['],
    ['no peers key', { hosts: [] }],
    ['peers not a list', { peers: {} }],
    ['entry not an object', { peers: ['http://x'] }],
    ['no url', { peers: [{ name: 'x' }] }],
    ['not http', { peers: [{ url: 'ftp://x' }] }],
    ['credentials in url', { peers: [{ url: 'http://u:p@x' }] }],
    ['token not a string', { peers: [{ url: 'http://x', token: 5 }] }],
    [
      'duplicate names',
      {
        peers: [
          { name: 'a', url: 'http://x' },
          { name: 'a', url: 'http://y' },
        ],
      },
    ],
  ])('refuses %s with sync.peers_file naming the file', (_what, value) => {
    const err = catchHubError(() => parse(value));
    expect(err).toBeInstanceOf(HubError);
    expect(err.code).toBe('sync.peers_file');
    expect(err.message).toContain(`${path} is malformed`);
  });
});
