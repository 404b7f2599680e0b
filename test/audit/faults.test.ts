// A database that refuses the audit log's writes (docs/security.md, "Audit log"): the API
// keeps answering, entries wait in memory up to a bound, those past it are counted as
// dropped (compplan_audit_entries_dropped_total) and logged, and what waited is written
// once the database takes writes again. The refusal is real: another connection holds the
// log's table (SQLite: the database's write lock, which the log does not wait for;
// PostgreSQL: a lock on audit_entries, which the insert waits on until its statement
// timeout).
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { testDialect } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { auditEntriesOf, requestsOf } from './helpers.js';

const BOUND = 5;

/** Holds the audit log's table against writes until the returned function is called. */
async function holdAuditTable(server: TestServer): Promise<() => Promise<void>> {
  const config = server.databaseConfig;
  if (config.dialect === 'sqlite') {
    const other = new SQLite(config.path);
    other.exec('begin immediate');
    return async () => {
      other.exec('rollback');
      other.close();
    };
  }
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  await client.query('begin');
  // Reads go on; writes wait.
  await client.query('lock table audit_entries in exclusive mode');
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

// Written on the event loop's thread (the tests' in-process servers, and PostgreSQL), and
// on SQLite in the writer thread of `compplan serve`, whose refusals come back to the same
// writer.
describe.each([
  { where: 'on the event loop', auditWriterThread: false },
  ...(testDialect() === 'sqlite'
    ? [{ where: 'in its writer thread', auditWriterThread: true }]
    : []),
])('audit log: a database that refuses its writes, written $where', ({ auditWriterThread }) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [acmeDataSet()],
      auditBufferLimit: BOUND,
      auditWriterThread,
    });
    key = await server.createKey(ACME, 'reader');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers every request, keeps entries up to the bound, counts and logs the rest as dropped, and writes what waited once it can', async () => {
    const release = await holdAuditTable(server);
    let flushing: Promise<void> | undefined;
    const statuses: number[] = [];
    try {
      for (let n = 0; n < 3; n++) statuses.push((await server.request('/ping', { key })).status);
      // A write attempt while the table is held; requests go on meanwhile.
      flushing = server.app.audit.flush();
      for (let n = 0; n < 5; n++) statuses.push((await server.request('/ping', { key })).status);
      await flushing;
    } finally {
      await release();
    }
    expect(statuses).toEqual(Array(8).fill(200));
    const dropped = await server.app.metrics.registry.getSingleMetricAsString(
      'compplan_audit_entries_dropped_total',
    );
    expect(dropped).toContain('compplan_audit_entries_dropped_total{reason="buffer-full"} 3');
    const messages = server.logs.map((line) => line.msg);
    expect(messages).toContain(
      'cannot write audit log entries: they are kept in memory and tried again every second',
    );
    expect(messages).toContain(
      'audit log entries dropped: the database refuses to write them (compplan_audit_entries_dropped_total counts them)',
    );

    await server.app.audit.flush();
    expect(requestsOf(await auditEntriesOf(server.database.db, ACME))).toHaveLength(BOUND);
  });
});
