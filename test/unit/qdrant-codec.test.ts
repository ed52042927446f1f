// A Qdrant payload read back is the drawer written (every field, the exact vector), and a payload
// with fields missing or of the wrong type reads as a drawer with each field defaulted.

import { describe, expect, it } from 'vitest';

import { fromPayload, toPayload } from '../../hub/src/vector/qdrant-codec.js';
import { axisVector, storedDrawer } from '../contract/vector-store.contract.js';

describe('the Qdrant payload codec', () => {
  it('round-trips a drawer through its payload (JSON on the wire)', () => {
    for (const d of [
      storedDrawer(),
      storedDrawer({ tags: ['db', 'ops'], source_file: 'src/a.ts', chunk_index: 3, parent_id: 'drawer_p', useful: false, metadata: { kind: 'note', n: 2 }, vector: axisVector(5) }),
      storedDrawer({ useful: true, content: 'ünïcode\nlines' }),
    ])
      expect(fromPayload(JSON.parse(JSON.stringify(toPayload(d))) as Record<string, unknown>)).toEqual(d);
  });

  it('defaults what a payload lacks or holds with the wrong type', () => {
    expect(fromPayload({ drawer_id: 7, tags: 'db', source_file: 3, chunk_index: '2', useful: 'yes', metadata: [1], vector_b64: 5 })).toEqual({
      id: '7',
      wing: '',
      room: '',
      tags: [],
      content: '',
      source_file: null,
      chunk_index: 2,
      parent_id: null,
      filed_at: '',
      added_by: '',
      useful: null,
      metadata: {},
      embedder: '',
      vector: new Float32Array(0),
    });
    expect(fromPayload({})).toMatchObject({ id: '', tags: [], chunk_index: 0, source_file: null, parent_id: null, useful: null, metadata: {} });
  });
});
