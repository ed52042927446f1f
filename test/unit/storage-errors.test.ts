// A full disk is a clear, stable error: SQLITE_FULL, ENOSPC and EFBIG become store.full (HTTP 507);
// a failed write (SQLITE_IOERR_WRITE) stays store.failed but says what usually causes it.

import { describe, expect, it } from 'vitest';

import { httpStatusFor, toHubError } from '../../hub/src/errors.js';

function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('storage failures', () => {
  it('maps a full disk or a file-size limit to store.full', () => {
    for (const code of ['SQLITE_FULL', 'ENOSPC', 'EFBIG']) {
      const error = toHubError(failure(code, 'database or disk is full'));
      expect(error.code, code).toBe('store.full');
      expect(error.message).toMatch(/disk is full.*nothing was stored/);
    }
    expect(httpStatusFor('store.full')).toBe(507);
  });

  it('explains a failed write without calling it full', () => {
    const error = toHubError(failure('SQLITE_IOERR_WRITE', 'disk I/O error'));
    expect(error.code).toBe('store.failed');
    expect(error.message).toMatch(/disk may be full, a file-size limit reached or the device failing/);
  });
});
