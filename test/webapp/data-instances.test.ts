// Settings → Data on two `compplan serve` instances of one database (docs/web-app.md,
// "Several instances"), each request of one signed-in session sent to either, as a load
// balancer without sticky sessions would: the whole list of a refused file's problems
// (problems.csv) is served by whichever instance is asked, since it is kept in the
// database; a checked file stays on the instance that checked it, so the other says so
// plainly — on the page the check leads to and at its Import — and imports nothing, while
// the instance that checked it imports it. Over real HTTP, on both databases.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type CompplanInstance, startCompplan } from '../helpers/services/compplan.js';
import {
  csrfTokenOf,
  signedInClient,
  staffedDataSet,
  textOf,
  WebClient,
} from '../helpers/web-client.js';

const DATA = '/app/settings/data';
const HEADER = 'email,firstName,lastName,currencyCode,eligibilityStatus';
const ELSEWHERE =
  'That check was made by another compplan server than the one that answered now (compplan runs on several servers here, or this one has restarted since), and the checked file is kept only there. Check the file again, then import it. If this happens every time, tell whoever runs compplan: the Data page needs each signed-in session to reach the same server.';

const temporary = mkdtempSync(join(tmpdir(), 'compplan-data-instances-test-'));

describe('Settings → Data on two instances of one database', () => {
  let server: TestServer;
  let first: CompplanInstance;
  let second: CompplanInstance;
  /** The owner's one session, on each instance (sessions are kept in the database). */
  let atFirst: WebClient;
  let atSecond: WebClient;

  const storedEmails = async () => {
    const { rows } = await sql<{ email: string }>`
      select email from merit_cycle_employees order by email`.execute(server.database.db);
    return rows.map((row) => row.email);
  };
  const cycleId = async () => {
    const { rows } = await sql<{ id: string }>`select id from merit_cycles`.execute(
      server.database.db,
    );
    return rows[0]?.id ?? '';
  };
  async function check(file: { name: string; content: string }, fields: Record<string, string>) {
    return atFirst.upload(
      `${DATA}/check`,
      { _csrf: await atFirst.csrfToken(DATA), ...fields },
      file,
    );
  }

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [staffedDataSet('initech', ['a@initech.example'])],
    });
    const env = { DATABASE_URL: server.databaseUrl, TMPDIR: temporary };
    [first, second] = await Promise.all([startCompplan(env), startCompplan(env)]);
    const { client } = await signedInClient(server, 'owner@initech.example', 'owner');
    atFirst = new WebClient(first.url);
    atSecond = new WebClient(second.url);
    for (const [name, value] of client.cookies) {
      atFirst.cookies.set(name, value);
      atSecond.cookies.set(name, value);
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await server?.close();
    rmSync(temporary, { recursive: true, force: true });
  });

  it('a refused spreadsheet’s problems.csv is served by the other instance too', async () => {
    const refused = await check(
      { name: 'people.csv', content: `${HEADER}\nnope,A,B,USD,Eligible\n` },
      { format: 'csv', cycle: await cycleId() },
    );
    expect(refused.status).toBe(422);
    const expected =
      'row,column,value,problem\r\n2,email,nope,"This is not an email address. Write the employee’s email address, such as ada@example.com."\r\n';
    for (const client of [atFirst, atSecond]) {
      const list = await client.get(`${DATA}/problems.csv`);
      expect(list.status).toBe(200);
      expect(list.body).toBe(expected);
    }
  });

  it('a refused data set’s problems.csv is served by the other instance too, and replaces the last list', async () => {
    const refused = await check(
      {
        name: 'bad.json',
        content: JSON.stringify(staffedDataSet('initech', ['a@initech.example', 'not-an-email'])),
      },
      { format: 'data-set' },
    );
    expect(refused.status).toBe(422);
    const list = await atSecond.get(`${DATA}/problems.csv`);
    expect(list.status).toBe(200);
    expect(list.body).toBe(
      'line,record,field,problem\r\n,"employee 2 (not-an-email) of merit cycle 1 (""2026 Annual Merit"")","field ""email""",must be an email address\r\n',
    );
  });

  it('a check’s file stays on the instance that checked it: the other says so plainly and imports nothing; the first imports it', async () => {
    const before = await storedEmails();
    const checked = await check(
      { name: 'people.csv', content: `${HEADER}\nb@initech.example,B,Lee,USD,Eligible\n` },
      { format: 'csv', cycle: await cycleId() },
    );
    expect(checked.status).toBe(303);
    const location = checked.location ?? '';

    // The page the check leads to, asked of the other instance: said plainly, no Import.
    const elsewhere = await atSecond.get(location);
    expect(elsewhere.status).toBe(200);
    expect(textOf(elsewhere.body)).toContain(ELSEWHERE);
    expect(elsewhere.body).not.toContain(`action="${DATA}/import"`);

    // Its Import, sent to the other instance: refused with the same words, nothing done.
    const page = await atFirst.get(location);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const refused = await atSecond.post(`${DATA}/import`, {
      _csrf: csrfTokenOf(page.body),
      token,
    });
    expect(refused.status).toBe(410);
    expect(textOf(refused.body)).toContain(ELSEWHERE);
    expect(await storedEmails()).toEqual(before);

    // The instance that checked it imports it.
    const imported = await atFirst.post(`${DATA}/import`, { _csrf: csrfTokenOf(page.body), token });
    expect(imported.status).toBe(303);
    expect(await storedEmails()).toEqual(['a@initech.example', 'b@initech.example']);
    // A check of its own that has been imported is said as such, not as another server's.
    const gone = await atFirst.get(location);
    expect(textOf(gone.body)).toContain(
      'That check has expired or its file was imported already. Upload the file again.',
    );
  });
});
