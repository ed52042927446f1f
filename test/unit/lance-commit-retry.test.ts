// The FTS build's retry when it loses a commit race with a background compaction (LanceDB's
// "Retryable commit conflict"): tried again a few times; any other error is thrown at once.

import { describe, expect, it } from 'vitest';

import { retryOnCommitConflict } from '../../hub/src/vector/lancedb-vector-store.js';

const conflict = (): Error => new Error('lance error: Retryable commit conflict for version 12: This CreateIndex transaction was preempted by concurrent transaction Rewrite at version 12');

describe('retryOnCommitConflict', () => {
  it('runs the commit again after a conflict and returns its result', async () => {
    let calls = 0;
    const result = await retryOnCommitConflict(async () => {
      calls++;
      if (calls < 3) throw conflict();
      return 'indexed';
    }, 5, 1);
    expect(result).toBe('indexed');
    expect(calls).toBe(3);
  });

  it('throws any other error at once', async () => {
    let calls = 0;
    await expect(
      retryOnCommitConflict(async () => {
        calls++;
        throw new Error('disk full');
      }, 5, 1),
    ).rejects.toThrow('disk full');
    expect(calls).toBe(1);
  });

  it('gives up after its tries with the conflict itself', async () => {
    let calls = 0;
    await expect(
      retryOnCommitConflict(async () => {
        calls++;
        throw conflict();
      }, 4, 1),
    ).rejects.toThrow(/Retryable commit conflict/);
    expect(calls).toBe(4);
  });
});
