/** The authenticated caller of an owner route (the onRequest hook in app.ts sets it; docs/api.md 5). */
import type { Caller } from '../domain/accounts.js';
import { ApiError } from '../errors.js';

export function callerOf(request: { readonly caller: Caller | null }): Caller {
  if (request.caller === null) throw new ApiError('unauthorized');
  return request.caller;
}
