// The staging table of an import (load.ts, step 1): valid employees are written to it in
// batches as the file is read, inside the import's transaction, and the checks and the
// merge are SQL over it. A batch is encoded where it is built (intake.ts, in the worker
// thread for a file) and written by the thread that holds the transaction (StagingWriter).
import { CompiledQuery, type Kysely } from 'kysely';
import { SQLITE_CHANGE_CACHE_KIB } from '../changes/transaction.js';
import type { Dialect } from '../db/connect.js';
import type { Database } from '../db/types.js';

type Tx = Kysely<Database>;

export const STAGING = 'compplan_import_employees';
export const MATCHES = 'compplan_import_matches';

// Rows per staging insert, on both databases. SQLite: one multi-row INSERT (17 values a
// row, well under its 32,766 bound parameters). PostgreSQL: one INSERT … SELECT of two
// parameters (StagedBatch), about 450,000 characters; with the intake in its own thread,
// batches of 500 kept both sides busier than 2,000 did (docs/benchmarks.md).
export const BATCH_ROWS = 500;

// The staging table's columns, in the order a batch sends them: an employee's position in
// the file (the first four, integers), the id the file gives (if any) and the one it is
// created with when it matches no stored employee, then what a write needs — null for a row
// staged after a problem was found, which only the checks read: its flat CSV line's key
// and text after the ids (export/flat-line.ts), and `body_tail` last (the text after the
// id, stored-body.ts; a PostgreSQL batch sends those apart).
const STAGED = [
  'seq',
  'cycle_index',
  'employee_index',
  'line',
  'id',
  'new_id',
  'email',
  'email_key',
  'first_name',
  'last_name',
  'preferred_name',
  'currency_code',
  'currency_name',
  'eligibility_status',
  'flat_key',
  'flat_tail',
  'body_tail',
] as const;
export type StagedRow = Record<(typeof STAGED)[number], string | number | null>;
const INTEGER_COLUMNS = 4;
const RECORDSET_COLUMNS = STAGED.slice(0, -1)
  .map((name, column) => `${name} ${column < INTEGER_COLUMNS ? 'integer' : 'text'}`)
  .join(', ');
const INSERT_BATCH = `insert into ${STAGING} (${STAGED.join(', ')})
  select ${STAGED.slice(0, -1).join(', ')}, nullif(body_tail, '')
    from rows from (json_to_recordset($1::json) as (${RECORDSET_COLUMNS}),
                    unnest(string_to_array($2::text, chr(30)))) as staged(${STAGED.join(', ')})`;
// Between two bodies of a PostgreSQL batch: JSON.stringify writes every control character
// as an escape, so U+001E is never in a body; an empty text between two is a null body.
const BODY_SEPARATOR = '\u001e';

/**
 * A batch of staged rows as the database takes it: SQLite binds every value of a
 * multi-row INSERT; PostgreSQL takes one JSON text of the row objects but their bodies,
 * taken apart by json_to_recordset — about half the time of unnest() over one array
 * parameter a column, whose array literals PostgreSQL parses more slowly than JSON — and
 * the bodies in a text of their own, split by string_to_array. A body inside the JSON
 * was a string of JSON escaped into JSON: a fifth of the time of each side's part of the
 * write went to escaping and unescaping it (docs/benchmarks.md). Plain data: it crosses
 * from the worker thread that builds it to the one that writes it.
 */
export type StagedBatch =
  | { dialect: 'sqlite'; rows: number; values: unknown[] }
  | { dialect: 'postgres'; rows: number; json: string; bodies: string };

export function toBatch(dialect: Dialect, rows: readonly StagedRow[]): StagedBatch {
  if (dialect === 'sqlite') {
    // A loop: flatMap over the rows made the intake 4 % slower.
    const values: unknown[] = [];
    for (const row of rows) for (const column of STAGED) values.push(row[column]);
    return { dialect, rows: rows.length, values };
  }
  const json = JSON.stringify(rows.map(({ body_tail, ...fields }) => fields));
  const bodies = rows.map((row) => row.body_tail ?? '').join(BODY_SEPARATOR);
  return { dialect, rows: rows.length, json, bodies };
}

/**
 * Writes batches to the staging table. PostgreSQL works in another process: a batch is
 * sent and `write` returns, so the next one is built while it is written (one batch in
 * flight, awaited before the next is sent or anything else is asked). SQLite writes in
 * this thread, at once.
 */
export class StagingWriter {
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(private readonly trx: Tx) {}

  async write(batch: StagedBatch): Promise<void> {
    await this.inFlight;
    if (batch.dialect === 'postgres') {
      const sent = this.trx.executeQuery(
        CompiledQuery.raw(INSERT_BATCH, [batch.json, batch.bodies]),
      );
      // Awaited by the next write or by finish; marked as handled meanwhile, so that a
      // failure is not reported as unhandled before then.
      sent.catch(() => undefined);
      this.inFlight = sent;
      return;
    }
    const row = `(${STAGED.map(() => '?').join(', ')})`;
    const rows = Array.from({ length: batch.rows }, () => row).join(', ');
    await run(
      this.trx,
      `insert into ${STAGING} (${STAGED.join(', ')}) values ${rows}`,
      batch.values,
    );
  }

  /** Waits until every batch is written (or throws the error of the one that was not). */
  async finish(): Promise<void> {
    await this.inFlight;
  }
}

async function run(trx: Tx, text: string, parameters: unknown[] = []): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(text, parameters));
}

export async function createStaging(trx: Tx, dialect: Dialect): Promise<void> {
  // Ids compare as the stored ids do (PostgreSQL: COLLATE "C", see migration 0001), so
  // that joins on them can use the primary key.
  const id = dialect === 'postgres' ? 'text collate "C"' : 'text';
  const type = (name: string, column: number) =>
    column < INTEGER_COLUMNS ? 'integer' : name.endsWith('id') ? id : 'text';
  // PostgreSQL: never written to the WAL, and gone with the transaction. SQLite: in the
  // connection's temporary database (never the main database's file), made in the
  // transaction, so that a rollback removes them too; `seq` the rowid.
  const [temporary, key] = dialect === 'postgres' ? [' on commit drop', ''] : ['', ' primary key'];
  if (dialect === 'sqlite') {
    await dropStaging(trx, dialect, 'if exists');
    await run(trx, `pragma temp.cache_size = -${SQLITE_CHANGE_CACHE_KIB / 4}`);
  }
  const columns = STAGED.map((name, column) => `${name} ${type(name, column)}`).join(', ');
  await run(
    trx,
    `create temporary table ${STAGING} (${columns.replace('seq integer', `seq integer${key}`)})${temporary}`,
  );
  await run(
    trx,
    `create temporary table ${MATCHES} (seq integer primary key, stored_id ${id} not null, same integer not null, other_line integer not null)${temporary}`,
  );
  await run(trx, `create index ${MATCHES}_by_stored on ${MATCHES} (stored_id)`);
}

/** Once every staged row is in: what the checks and the merge need of the table. */
export async function indexStaging(trx: Tx, dialect: Dialect): Promise<void> {
  // Indexes made once the rows are in: cheaper than keeping them up to date row by row.
  await run(trx, `create index ${STAGING}_by_cycle on ${STAGING} (cycle_index, employee_index)`);
  // PostgreSQL plans the checks and the merge from statistics of the columns they
  // filter and join on; sampling the wide one (body) too took as long again
  // as the rest of ANALYZE (a third of a second for 50,000 employees).
  if (dialect === 'postgres') {
    await run(trx, `analyze ${STAGING} (seq, cycle_index, employee_index, id, email_key)`);
  }
}

/** SQLite's temporary tables last as long as the connection; PostgreSQL's, the transaction. */
export async function dropStaging(trx: Tx, dialect: Dialect, ifExists = ''): Promise<void> {
  if (dialect === 'sqlite') {
    await run(trx, `drop table ${ifExists} temp.${STAGING}`);
    await run(trx, `drop table ${ifExists} temp.${MATCHES}`);
  }
}
