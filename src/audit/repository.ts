// The audit log's table (migration 0012): request entries in batches, management actions
// in the transaction of the action, pages newest first, and the purge. Every read takes
// the organisation id, so no page can show another organisation's entries.
import { CompiledQuery, sql } from 'kysely';
import type { DatabaseHandle, Db } from '../db/connect.js';
import type { AuditEntriesTable } from '../db/types.js';
import { toIso } from '../db/values.js';
import { inWriteTransaction } from '../db/write-transaction.js';
import { columnNeedle, columnsOfText } from './columns-served.js';
import type { ActionEntry, AuditAction, AuditEntry, RequestEntry } from './entry.js';

// The columns of a request entry, in the order of parametersOf's values, with their types
// in PostgreSQL (which the arrays of its insert are cast to).
const REQUEST_COLUMNS = [
  ['at', 'timestamptz'],
  ['organization_id', 'text'],
  ['action', 'text'],
  ['key_id', 'text'],
  ['method', 'text'],
  ['route', 'text'],
  ['path', 'text'],
  ['merit_cycle_id', 'text'],
  ['status', 'integer'],
  ['employees', 'integer'],
  ['client_address', 'text'],
  ['user_agent', 'text'],
  ['request_id', 'text'],
  ['columns_served', 'text'],
  ['row_slice_id', 'text'],
] as const;
const WIDTH = REQUEST_COLUMNS.length;
const COLUMN_LIST = REQUEST_COLUMNS.map(([name]) => name).join(',');
/** Entries a statement: 15 values each on SQLite, far below its bound parameters. */
export const ENTRIES_PER_STATEMENT = 1_000;

/**
 * SQLite's insert of `rows` request entries: a row of values each. Built as text rather
 * than through Kysely's builder: a thousand rows of thirteen values is an expression tree
 * of 13,000 nodes to build and compile every second, and the text of a full batch is the
 * same every time, so its prepared statement is kept (src/db/statement-cache.ts).
 */
function sqliteInsertText(rows: number): string {
  const row = `(${new Array(WIDTH).fill('?').join(',')})`;
  return `insert into audit_entries (${COLUMN_LIST}) values ${new Array(rows).fill(row).join(',')}`;
}

/**
 * The rows of SQLite's statements, largest first: a batch is cut into statements of these
 * sizes, so that its connection keeps four prepared inserts rather than one for every
 * size a batch happens to have. Prepared, an insert of hundreds of rows is hundreds of KB,
 * and the statement cache kept up to 200 of them: a loaded server peaked 45–80 MB higher
 * (docs/benchmarks.md).
 */
const SQLITE_INSERTS = [ENTRIES_PER_STATEMENT, 100, 10, 1].map(
  (rows) => [rows, sqliteInsertText(rows)] as const,
);

/** `count` entries as SQLite's statements take them: [start, end, text] of each. */
function* sqliteStatementsOf(count: number): Generator<[number, number, string]> {
  let start = 0;
  for (const [rows, text] of SQLITE_INSERTS) {
    for (; count - start >= rows; start += rows) yield [start, start + rows, text];
  }
}

/**
 * PostgreSQL's insert of any number of entries: one array a column, unnested into rows.
 * A statement of a thousand rows of values was parsed and planned anew at each batch
 * (PostgreSQL keeps no plan of an unnamed statement): 15 µs of the server's CPU an entry,
 * against about 8 this way (docs/benchmarks.md).
 */
const POSTGRES_INSERT = `insert into audit_entries (${COLUMN_LIST}) select * from unnest(${REQUEST_COLUMNS.map(
  ([, type], index) => `$${index + 1}::${type}[]`,
).join(',')})`;

/** The values of `parameters` (WIDTH an entry, as parametersOf gives them), a column each. */
function columnsOf(parameters: readonly unknown[]): unknown[][] {
  const columns: unknown[][] = REQUEST_COLUMNS.map(() => []);
  for (let at = 0; at < parameters.length; at++) columns[at % WIDTH]?.push(parameters[at]);
  return columns;
}

function parametersOf(entries: readonly RequestEntry[]): unknown[] {
  const parameters: unknown[] = [];
  // A busy server answers several requests a millisecond, and a batch holds them in the
  // order they were answered: a time's text is made once for the entries that share it.
  let at = Number.NaN;
  let atText = '';
  for (const entry of entries) {
    if (entry.at !== at) {
      at = entry.at;
      atText = new Date(at).toISOString();
    }
    parameters.push(
      atText,
      entry.organizationId,
      'api.request',
      entry.keyId,
      entry.method,
      entry.route,
      entry.path,
      entry.meritCycleId,
      entry.status,
      entry.employees,
      entry.clientAddress,
      entry.userAgent,
      entry.requestId,
      entry.columnsServed,
      entry.rowSliceId,
    );
  }
  return parameters;
}

/**
 * Writes request entries, ENTRIES_PER_STATEMENT a statement, in one transaction; on SQLite
 * without waiting for another process's write lock (an import's) unless `wait` (at
 * shutdown, when no request is left to stop): it fails at once and the writer tries again
 * later, where waiting would stop every request of this process (db/write-transaction.ts).
 */
export async function insertRequestEntries(
  database: DatabaseHandle,
  entries: readonly RequestEntry[],
  wait = false,
): Promise<void> {
  if (entries.length === 0) return;
  const { dialect } = database;
  await inWriteTransaction(
    database.db,
    async (connection) => {
      if (dialect === 'postgres') {
        for (let start = 0; start < entries.length; start += ENTRIES_PER_STATEMENT) {
          const batch = entries.slice(start, start + ENTRIES_PER_STATEMENT);
          await connection.executeQuery(
            CompiledQuery.raw(POSTGRES_INSERT, columnsOf(parametersOf(batch))),
          );
        }
        return;
      }
      for (const [start, end, text] of sqliteStatementsOf(entries.length)) {
        await connection.executeQuery(
          CompiledQuery.raw(text, parametersOf(entries.slice(start, end))),
        );
      }
    },
    { wait },
  );
}

/** Records a management action; `db` is the transaction of the action. */
export async function recordAction(db: Db, entry: ActionEntry): Promise<void> {
  const { actor } = entry;
  await db
    .insertInto('audit_entries')
    .values({
      at: (entry.at ?? new Date()).toISOString(),
      organization_id: entry.organizationId,
      action: entry.action,
      actor: actor.kind === 'cli' ? 'cli' : actor.email,
      user_id: actor.kind === 'user' ? actor.userId : null,
      target: entry.target ?? null,
      key_id: entry.keyId ?? null,
      details: entry.details === undefined ? null : JSON.stringify(entry.details),
      client_address: actor.kind === 'user' ? actor.address : null,
    })
    .execute();
}

/**
 * Runs a management action and records it in one transaction: both commit, or neither.
 * `entryOf` says what to record of the action's result; undefined records nothing (an
 * action that turned out to change nothing, such as revoking a revoked key). A write
 * transaction from its start (db/write-transaction.ts): actions read, then write.
 */
export function withRecordedAction<T>(
  db: Db,
  action: (trx: Db) => Promise<T>,
  entryOf: (result: T) => ActionEntry | undefined,
): Promise<T> {
  return inWriteTransaction(db, async (trx) => {
    const result = await action(trx);
    const entry = entryOf(result);
    if (entry) await recordAction(trx, entry);
    return result;
  });
}

export interface AuditFilter {
  keyId?: string | undefined;
  userId?: string | undefined;
  action?: AuditAction | undefined;
  /** Entries at or after this time (ISO 8601). */
  since?: string | undefined;
  /** Entries before this time (ISO 8601). */
  until?: string | undefined;
  /** Request entries whose answer carried this column key (columns-served.ts). */
  column?: string | undefined;
}

/** Where a page ends: the last entry's time and id; the next page starts after it. */
export interface AuditPosition {
  at: string;
  id: string;
}

type Row = {
  [K in keyof AuditEntriesTable]: AuditEntriesTable[K] extends { __select__: infer S }
    ? S
    : AuditEntriesTable[K];
};

function toAuditEntry(row: Row): AuditEntry {
  return {
    id: String(row.id),
    at: toIso(row.at),
    action: row.action as AuditAction,
    actor: row.actor,
    userId: row.user_id,
    keyId: row.key_id,
    target: row.target,
    method: row.method,
    route: row.route,
    path: row.path,
    meritCycleId: row.merit_cycle_id,
    status: row.status === null ? null : Number(row.status),
    employees: row.employees === null ? null : Number(row.employees),
    columnsServed: columnsOfText(row.columns_served),
    rowSliceId: row.row_slice_id,
    clientAddress: row.client_address,
    userAgent: row.user_agent,
    requestId: row.request_id,
    details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
  };
}

/** One page of the organisation's entries, newest first, after `after` when given. */
export async function listAuditEntries(
  db: Db,
  organizationId: string,
  filter: AuditFilter,
  page: { after?: AuditPosition | undefined; limit: number },
): Promise<AuditEntry[]> {
  let query = db
    .selectFrom('audit_entries')
    .selectAll()
    .where('organization_id', '=', organizationId);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
  if (filter.until !== undefined) query = query.where('at', '<', filter.until);
  if (filter.column !== undefined) {
    // The text holds the needle: exact and case-sensitive on both databases, with no
    // function one of them lacks (SQLite's LIKE ignores ASCII case; it has no strpos).
    const needle = columnNeedle(filter.column);
    query = query.where(sql<boolean>`replace(columns_served, ${needle}, '') <> columns_served`);
  }
  const { after } = page;
  if (after) {
    // An id as text would compare as text; both databases take the number.
    const id = Number(after.id);
    query = query.where((eb) =>
      eb.or([
        eb('at', '<', after.at),
        eb.and([eb('at', '=', after.at), eb('id', '<', id as never)]),
      ]),
    );
  }
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
  return rows.map((row) => toAuditEntry(row as Row));
}

/**
 * The users an organisation's entries name (actions of the web application's users), each
 * with the email of their latest entry: removed users are still found here.
 */
export async function usersNamedInLog(
  db: Db,
  organizationId: string,
): Promise<{ id: string; email: string }[]> {
  const rows = await db
    .selectFrom('audit_entries')
    .select((eb) => ['user_id', eb.fn.max('id').as('latest')])
    .where('organization_id', '=', organizationId)
    .where('user_id', 'is not', null)
    .groupBy('user_id')
    .execute();
  if (rows.length === 0) return [];
  const emails = await db
    .selectFrom('audit_entries')
    .select(['user_id', 'actor'])
    .where('organization_id', '=', organizationId)
    .where(
      'id',
      'in',
      rows.map((row) => Number(row.latest) as never),
    )
    .execute();
  return emails.map((row) => ({ id: row.user_id ?? '', email: row.actor ?? '' }));
}

/** Removes every entry older than `before` (not waiting for an import's lock); how many. */
export async function purgeAuditEntries(database: DatabaseHandle, before: Date): Promise<number> {
  let removed = 0;
  await inWriteTransaction(
    database.db,
    async (connection) => {
      const result = await connection
        .deleteFrom('audit_entries')
        .where('at', '<', before.toISOString())
        .executeTakeFirst();
      removed = Number(result.numDeletedRows);
    },
    { wait: false },
  );
  return removed;
}
