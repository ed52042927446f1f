// Test helpers that capture a thrown or rejected HubError so tests can assert on its code and field.

import { HubError } from '../../hub/src/errors.js';

/** Runs `fn` and returns the HubError it throws; fails the test if it throws nothing or something else. */
export function catchHubError(fn: () => unknown): HubError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HubError) return err;
    throw new Error(`expected a HubError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected a HubError, but nothing was thrown');
}

/** Awaits `promise` and returns the HubError it rejects with; fails the test otherwise. */
export async function rejectedHubError(promise: Promise<unknown>): Promise<HubError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof HubError) return err;
    throw new Error(`expected a HubError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected a rejection with a HubError, but the promise resolved');
}
