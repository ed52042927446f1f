// The CLI's one 401 message: whether it sent a token decides what it says.

import { HubError } from '../hub/src/errors.js';

/** The error for a hub's HTTP 401: "needs a token" when none was sent, "refused the token" when one was. */
export function unauthorized(base: string, sentToken: boolean): HubError {
  return new HubError(
    'auth.unauthorized',
    sentToken
      ? `the hub at ${base} refused the token (HTTP 401): it was started with another one; set PALACE_MCP_HTTP_TOKEN to the hub's token`
      : `the hub at ${base} needs a token (HTTP 401) and none was sent: there is no token file for this palace and PALACE_MCP_HTTP_TOKEN is not set; set it to the hub's token`,
  );
}
