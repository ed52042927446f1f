// Binding a nested object's writer (an item of a batch) to the caller, the way IdentityService.bind
// binds a tool's top-level fields. Its own module, importing identity.ts for types only, so the
// memory tools do not load the agent registry to use it.

import { HubError } from '../errors.js';
import type { Caller, IdentityService } from './identity.js';

/**
 * Binds the identity fields of one nested object (an item of a batch, e.g. palace_add_drawers'
 * `items[i]`) to `caller`, as `bind` does a tool's top-level fields. A refusal names where:
 * its field becomes `<path>.<field>` and its message starts with `<path>: `.
 */
export function bindNested(
  identity: IdentityService,
  tool: string,
  path: string,
  declared: ReadonlySet<string>,
  args: Record<string, unknown>,
  caller: Caller,
): Record<string, unknown> {
  try {
    return identity.bind(tool, declared, args, caller);
  } catch (err) {
    if (!(err instanceof HubError)) throw err;
    throw new HubError(err.code, `${path}: ${err.message}`, {
      field: err.field === undefined ? path : `${path}.${err.field}`,
      ...(err.data === undefined ? {} : { data: err.data }),
    });
  }
}
