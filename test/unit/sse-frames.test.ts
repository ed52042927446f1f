// The incremental SSE parser shared by the dashboard and the tray: frames split across chunks,
// multi-line data, CRLF, comments and ids.

import { describe, expect, it } from 'vitest';

import { createSseParser } from '../../hub/src/core/sse-frames.js';

describe('createSseParser', () => {
  it('completes frames only at a blank line, whatever the chunking', () => {
    const text = ': connected\n\nid: evt_1\ndata: {"count":1}\n\nid: evt_2\ndata: {"count":2}\n\n';
    for (const size of [1, 3, 7, text.length]) {
      const parser = createSseParser();
      const frames = [];
      for (let i = 0; i < text.length; i += size) frames.push(...parser.push(text.slice(i, i + size)));
      expect(frames).toEqual([
        { comments: ['connected'] },
        { comments: [], id: 'evt_1', data: '{"count":1}' },
        { comments: [], id: 'evt_2', data: '{"count":2}' },
      ]);
    }
  });

  it('joins multi-line data, accepts CRLF, and keeps a partial frame for the next chunk', () => {
    const parser = createSseParser();
    expect(parser.push('event: message\r\ndata: line one\r\ndata:line two\r\n')).toEqual([]);
    expect(parser.push('\r\n: ping\r\n\r\nid')).toEqual([
      { comments: [], event: 'message', data: 'line one\nline two' },
      { comments: ['ping'] },
    ]);
    expect(parser.push(': evt_9\n\n')).toEqual([{ comments: [], id: 'evt_9' }]);
  });
});
