/**
 * Response serializers compiled on their first use rather than when their route is registered: Fastify's own
 * compiler (fast-json-stringify), wrapped so that start-up compiles nothing a request has not asked for yet. At start
 * this saved about 0.2 s of CPU for the service's routes (docs/architecture.md, "Process lifecycle"); the first answer
 * of each route pays its compilation once.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;

/** A `schemaController.compilersFactory.buildSerializer` for Fastify's options. */
export const buildSerializersOnFirstUse: Factory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ReturnType<typeof compile> | undefined;
    return (doc) => {
      serialize ??= compile(route);
      return serialize(doc);
    };
  };
};
