// Prepared statements, kept. Kysely builds each query and its SQLite driver prepares the
// SQL text on every call (about 15 µs each on these machines, plus the parse); the API
// runs a handful of distinct SQL texts over and over. This wraps the better-sqlite3
// handle that Kysely uses so that `prepare` returns the statement already prepared for the
// same text: Kysely stays the query builder, SQLite parses each hot query once.
//
// Bounded (least recently used text goes first), so that queries whose text varies (the
// import's multi-row inserts) cannot grow it without limit. A statement that is still
// being iterated (a streamed query) is never handed out twice: a fresh one is prepared.
import { createHash } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

const MAX_STATEMENTS = 200;

export function withStatementCache(
  database: SQLite.Database,
  max = MAX_STATEMENTS,
): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sql: string): SqliteStatement {
      const cached = statements.get(sql);
      if (cached && !cached.busy) {
        // Most recently used last: Map keeps insertion order.
        statements.delete(sql);
        statements.set(sql, cached);
        return cached as unknown as SqliteStatement;
      }
      const statement = database.prepare(sql);
      if (!cached) {
        statements.set(sql, statement);
        if (statements.size > max) {
          const oldest = statements.keys().next().value;
          if (oldest !== undefined) statements.delete(oldest);
        }
      }
      return statement as unknown as SqliteStatement;
    },
  };
}

/**
 * The start of a read that PostgreSQL must plan for its values each time: sent unnamed,
 * never as a prepared statement. After five runs of a named statement PostgreSQL may keep
 * one plan for any values (a generic plan); for a page of the OData feed that plan joins
 * every employee of the cycle and sorts them (127 ms for a page of 1,000 of 100,000
 * employees), where the plan made for the values reads the page's 1,001 rows of the index
 * in order (2.5 ms, 1.7 of them planning).
 */
export const PLANNED_EACH_TIME = '/* planned each time */ ';

/**
 * The same for PostgreSQL: node-postgres sends every query unnamed, so the server parses
 * and plans it each time. A read whose SQL text has been seen is sent as a named prepared
 * statement instead (the name derived from the text; src/db/postgres-pool.ts sends it),
 * which each connection prepares once and then only binds and executes. Only `select`
 * texts, and at most MAX_STATEMENTS of them: a connection keeps what it prepared for its
 * life, so the set must stay small (the hot reads of the API are a handful of texts).
 */
export function statementNames(max = MAX_STATEMENTS): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    if (text.startsWith(PLANNED_EACH_TIME)) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < max && /^\s*select\b/i.test(text)) {
      name = `compplan_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
}
