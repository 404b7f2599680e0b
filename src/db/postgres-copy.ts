// One column of a query's rows as PostgreSQL's own bytes: `COPY (query) TO STDOUT` in its
// binary format, through pg-copy-streams. A bulk download reads a million stored texts;
// as rows of an ordinary statement each text is decoded into a JavaScript string by the
// driver and encoded back into bytes for the socket, and those strings are what the
// garbage collector then spends its time on (docs/benchmarks.md, "Bulk download"). In
// COPY's binary format a text field is its UTF-8 bytes after their length: nothing to
// decode, escape or unescape.
//
// COPY takes no bound parameters, so the statement's are written into its text as
// literals, each escaped by node-postgres's escapeLiteral (strings) or checked to be a
// finite number.
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { CompiledQuery, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type pgCopyStreams from 'pg-copy-streams';

// Loaded when first used, as connect.ts loads `pg`: a process on SQLite (each `compplan
// import` of a file) loads neither.
const load = createRequire(import.meta.url);
const copyTo = (text: string) => (load('pg-copy-streams') as typeof pgCopyStreams).to(text);

/** Runs a COPY … TO STDOUT on the reader's connection and resolves with all it sent. */
export type CopyOut = (text: string) => Promise<Buffer>;

/**
 * COPY on a client of the pool (postgres-pool.ts passes a submittable query to
 * node-postgres as it is, which answers with the query itself: here the stream of data).
 */
export function copyOutOf(client: PostgresPoolClient): CopyOut {
  const submit = client.query as unknown as (
    query: ReturnType<typeof copyTo>,
  ) => Readable | Promise<never>;
  return (text) =>
    new Promise<Buffer>((resolve, reject) => {
      const stream = submit(copyTo(text));
      // A connection found broken refuses at once (postgres-pool.ts).
      if (stream instanceof Promise) {
        stream.catch(reject);
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('end', () =>
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
      );
    });
}

/** The statement's text with its parameters ($1, $2, …) written in as literals. */
export function inlined({ sql, parameters }: CompiledQuery): string {
  const { escapeLiteral } = load('pg') as typeof pg;
  return sql.replace(/\$(\d+)/g, (_, index: string) => {
    const value = parameters[Number(index) - 1];
    if (typeof value === 'string') return escapeLiteral(value);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    throw new Error(`a COPY statement takes no parameter of type ${typeof value} ($${index})`);
  });
}

// PGCOPY\n\377\r\n\0, the flags (32 bits) and the length of the header extension (32 bits).
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const NULL_LENGTH = -1;
const END_OF_DATA = -1;

/**
 * The first column of each row of a binary COPY's output, in order: its bytes (a view of
 * `copied`, not a copy) or null. https://www.postgresql.org/docs/15/sql-copy.html, "Binary
 * Format".
 */
export function firstColumnOf(copied: Buffer): (Buffer | null)[] {
  if (!copied.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new Error('not the output of a binary COPY');
  }
  let at = SIGNATURE.length + 4;
  at += 4 + copied.readUInt32BE(at);
  const values: (Buffer | null)[] = [];
  for (;;) {
    const fields = copied.readInt16BE(at);
    at += 2;
    if (fields === END_OF_DATA) return values;
    for (let field = 0; field < fields; field++) {
      const length = copied.readInt32BE(at);
      at += 4;
      const value = length === NULL_LENGTH ? null : copied.subarray(at, at + length);
      if (length > 0) at += length;
      if (field === 0) values.push(value);
    }
  }
}
