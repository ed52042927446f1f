// A hub opening its memory unpacks the census's marked rows from the LanceDB process's packed reply
// (~24k rows at 200k drawers) in slices, handing the event loop back between them: the same rows as
// the one-go unpack, with loop turns let through meanwhile.

import { describe, expect, it } from 'vitest';

import { packPlacementSummary, unpackPlacementSummary, unpackPlacementSummarySliced, type PlacementSummary } from '../../hub/src/vector/vector-store.js';
import { countLoopTurns } from '../helpers/loop-turns.js';

function summary(rows: number): PlacementSummary {
  const marked = Array.from({ length: rows }, (_, i) => ({
    id: `drawer_${i}`,
    wing: `proj-${i % 12}`,
    room: i % 3 === 0 ? 'decisions' : 'diary',
    tags: [],
    content: '',
    source_file: null,
    chunk_index: i % 4,
    parent_id: null,
    filed_at: `2026-0${1 + (i % 9)}-01T00:00:00Z`,
    added_by: '',
    useful: i % 5 === 0 ? true : i % 7 === 0 ? false : null,
    metadata: {},
    embedder: '',
    vector: new Float32Array(0),
  }));
  return { places: [{ wing: 'proj-0', room: 'decisions', rows }], marked };
}

describe('placement summary, sliced unpack', () => {
  it('unpacks the same rows as the one-go unpack, handing the loop back between slices', async () => {
    const packed = packPlacementSummary(summary(30_000));
    const whole = unpackPlacementSummary(packed);
    expect(whole.marked).toHaveLength(30_000);
    const turns = countLoopTurns();
    const sliced = await unpackPlacementSummarySliced(packed, 0); // a slice of 0 ms: a turn every step of rows
    const counted = turns.stop();
    expect(sliced).toEqual(whole);
    expect(counted).toBeGreaterThanOrEqual(29);
  });

  it('an empty summary unpacks to no rows', async () => {
    const packed = packPlacementSummary({ places: [], marked: [] });
    expect(await unpackPlacementSummarySliced(packed)).toEqual({ places: [], marked: [] });
  });
});
