/**
 * Statements compiled once, for the create path (docs/decisions/0027-compressed-deduplicated-bodies.md): Kysely builds
 * and compiles a query on every call, which cost a create about 0.3 ms of its event loop over its seven statements.
 * A prepared statement is written with the query builder as usual, with `slot('name')` where a value goes; it is
 * compiled for each kind of database on first use, and each call puts its values into the slots by position.
 */
import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Database } from '../schema.js';

/** The mark of a slot in a parameter list: no value a caller passes begins with U+0000 (docs/api.md 1). */
const SLOT = '\u0000slot:';

/** A value to be filled in at each call (typed as the column it goes into). */
export const slot = <T>(name: string): T => `${SLOT}${name}` as T;

/** Runs the statement on `executor` (a database or a transaction) with these values for its slots. */
export type Prepared<V> = <R>(executor: Kysely<Database>, values: V) => Promise<QueryResult<R>>;

export function prepared<V extends Record<string, unknown>>(
  build: (db: Kysely<Database>) => Compilable<unknown>,
): Prepared<V> {
  /** Compiled once per kind of database (the SQL differs: placeholders, quoting), keyed by its adapter's class. */
  const compiled = new Map<unknown, { readonly sql: string; readonly parameters: readonly unknown[] }>();
  return <R>(executor: Kysely<Database>, values: V) => {
    const kind = executor.getExecutor().adapter.constructor;
    let statement = compiled.get(kind);
    if (statement === undefined) {
      statement = build(executor).compile();
      compiled.set(kind, statement);
    }
    const bound = statement.parameters.map((p) => {
      if (typeof p !== 'string' || !p.startsWith(SLOT)) return p;
      const name = p.slice(SLOT.length);
      if (!(name in values)) throw new Error(`prepared statement: no value for slot "${name}"`);
      return values[name];
    });
    return executor.executeQuery<R>(CompiledQuery.raw(statement.sql, bound));
  };
}
