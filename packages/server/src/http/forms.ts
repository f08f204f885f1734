import type { FastifyInstance } from 'fastify';

/**
 * Parses HTML form posts (application/x-www-form-urlencoded) in an encapsulated context. The root context parses
 * every body as JSON; only the service's own HTML forms (passcode gate, /verify) register this.
 */
export function acceptFormPosts(instance: FastifyInstance): void {
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 8192 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
}

/** A string field of a parsed form body, '' when absent. */
export function formField(body: unknown, name: string): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}
