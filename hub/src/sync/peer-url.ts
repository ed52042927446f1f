// A peer's base URL, checked: on its own so that reading peers.json (peers-file.ts, which every
// palace process does for memory replication) never loads the HTTP transport and the protocol's schemas.

import { HubError } from '../errors.js';

/** A base URL checked and normalized (no trailing slash); throws `sync.peers_file` naming it. */
export function peerBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HubError('sync.peers_file', `peer url '${raw}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HubError('sync.peers_file', `peer url '${raw}' must be http:// or https://`);
  if (url.username || url.password)
    throw new HubError('sync.peers_file', `peer url '${raw}' must not carry credentials; use "token"`);
  if (url.search || url.hash)
    throw new HubError('sync.peers_file', `peer url '${raw}' must not have a query or fragment`);
  return url.toString().replace(/\/+$/, '');
}
