// Settings → Data's upload over real HTTP (both dialects): a check that writes nothing,
// then the Import of exactly the checked file — the command line's import, its rules and
// messages, problems in words for people; refused when the data changed since the check,
// for another organisation's data set, over the size limit (before the file is read whole),
// while another upload of the organisation runs, or without the form's token. Whatever
// fails or is abandoned leaves nothing behind in the staging area.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_KINDS } from '../../src/import/sheet-problems.js';
import { EVENT_TYPES } from '../../src/webhooks/events.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sendUpload } from '../helpers/uploads.js';
import {
  csrfTokenOf,
  signedInClient,
  staffedDataSet,
  textOf,
  type WebClient,
  webDataSet,
} from '../helpers/web-client.js';

const _PASSWORD = 'a long enough password';
const DATA = '/app/settings/data';
const MB = 1024 * 1024;

// The staging area is made under the temporary directory: this file's own, to look into.
const temporary = mkdtempSync(join(tmpdir(), 'compplan-upload-test-'));
const previousTmpdir = process.env.TMPDIR;
process.env.TMPDIR = temporary;

/** Every file in the staging area (there is one directory, once anything was uploaded). */
const stagedFiles = () =>
  readdirSync(temporary)
    .filter((name) => name.startsWith('compplan-import-staging-'))
    .flatMap((directory) => readdirSync(join(temporary, directory)));

const dataSetJson = (emails: string[], slug = 'initech') =>
  JSON.stringify(staffedDataSet(slug, emails));

describe('Settings → Data: upload, check, import', () => {
  let server: TestServer;
  let owner: WebClient;

  const signedIn = async (email: string, role: 'owner' | 'admin', org = 'initech') =>
    (await signedInClient(server, email, role, org)).client;

  async function check(
    client: WebClient,
    file: { name: string; content: string | Uint8Array },
    fields: Record<string, string> = { format: 'data-set' },
  ) {
    const _csrf = await client.csrfToken(DATA);
    return client.upload(`${DATA}/check`, { _csrf, ...fields }, file);
  }

  /** The Import form of a checked file, sent (prune ticked or not). */
  async function importChecked(client: WebClient, location: string, prune = false) {
    const page = await client.get(location);
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const _csrf = csrfTokenOf(page.body);
    return client.post(`${DATA}/import`, { _csrf, token, ...(prune ? { prune: 'on' } : {}) });
  }

  const storedEmails = async (slug = 'initech') => {
    const { rows } = await sql<{ email: string }>`select e.email from merit_cycle_employees e
      join organizations o on o.id = e.organization_id where o.slug = ${slug} order by e.email`.execute(
      server.database.db,
    );
    return rows.map((row) => row.email);
  };

  const cycleId = async () => {
    const { rows } = await sql<{ id: string }>`select c.id from merit_cycles c
      join organizations o on o.id = c.organization_id where o.slug = 'initech'`.execute(
      server.database.db,
    );
    return rows[0]?.id ?? '';
  };

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [
        staffedDataSet('initech', ['a@initech.example', 'b@initech.example']),
        webDataSet('globex'),
      ],
    });
    owner = await signedIn('owner@initech.example', 'owner');
  });
  afterAll(async () => {
    await server.close();
    expect(readdirSync(temporary).filter((name) => name.startsWith('compplan-import-'))).toEqual(
      [],
    );
    rmSync(temporary, { recursive: true, force: true });
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
  });

  it('check shows what would change and writes nothing; Import applies it, recorded as the user’s import', async () => {
    const checked = await check(owner, {
      name: 'initech.json',
      content: dataSetJson(['a@initech.example', 'B@initech.example', 'c@initech.example']),
    });
    expect(checked.status).toBe(303);
    expect(checked.location).toMatch(/^\/app\/settings\/data\?check=[0-9a-f]{8}\.[\w-]{43}$/);
    expect(await storedEmails()).toEqual(['a@initech.example', 'b@initech.example']);
    expect(stagedFiles()).toHaveLength(1);

    const page = await owner.get(checked.location ?? '');
    const text = textOf(page.body);
    expect(text).toContain('Checked: initech.json');
    expect(text).toMatch(/2026 Annual Merit Unchanged 1 1 1 0/);
    expect(text).toContain('nothing would be removed');

    const imported = await importChecked(owner, checked.location ?? '');
    expect(imported.status).toBe(303);
    expect(imported.location).toBe(DATA);
    expect(stagedFiles()).toEqual([]);
    expect(await storedEmails()).toEqual([
      'B@initech.example',
      'a@initech.example',
      'c@initech.example',
    ]);
    const after = textOf((await owner.get(DATA)).body);
    expect(after).toContain(
      'Imported initech.json: merit cycles 0 created, 0 updated, 1 unchanged; employees 1 created, 1 updated, 1 unchanged, 0 removed.',
    );
    expect(after).toMatch(
      /Active 3 \d{4}-\d\d-\d\d \d\d:\d\d UTC by owner@initech\.example 1 created, 1 updated, 1 unchanged, 0 removed/,
    );
    // The same check cannot be imported twice.
    expect((await importChecked(owner, checked.location ?? '')).status).toBe(410);
  });

  it('webhooks and delta sync see a web import as a command-line one: its events, its change stamps', async () => {
    await addWebhookEndpoint(server.database.db, {
      org: 'initech',
      url: 'http://127.0.0.1:9/hooks',
      events: [...EVENT_TYPES],
      allowPrivateNetworks: ['127.0.0.0/8'],
    });
    const counter = async () => {
      const { rows } = await sql<{
        change_seq: string | number;
      }>`select change_seq from organizations
        where slug = 'initech'`.execute(server.database.db);
      return Number(rows[0]?.change_seq);
    };
    const events = async () => {
      const { rows } = await sql<{ type: string }>`select e.type from webhook_events e
        join organizations o on o.id = e.organization_id where o.slug = 'initech'`.execute(
        server.database.db,
      );
      return rows.map((row) => row.type);
    };
    const [counterBefore, eventsBefore] = [await counter(), await events()];
    const checked = await check(owner, {
      name: 'hooked.json',
      content: dataSetJson(['a@initech.example', 'B@initech.example', 'C@initech.example']),
    });
    expect([await counter(), await events()]).toEqual([counterBefore, eventsBefore]);
    expect((await importChecked(owner, checked.location ?? '')).status).toBe(303);
    expect(await counter()).toBeGreaterThan(counterBefore);
    expect((await events()).slice(eventsBefore.length)).toEqual(['meritCycle.employees.changed']);
  });

  it('a file with problems: each named for people (employee, email, merit cycle, field), nothing changed or kept', async () => {
    const before = await storedEmails();
    const bad = staffedDataSet('initech', ['a@initech.example', 'not-an-email']);
    const employee = bad.meritCycles[0]?.employees?.[0];
    if (employee) employee.lastName = '';
    const refused = await check(owner, { name: 'bad.json', content: JSON.stringify(bad) });
    expect(refused.status).toBe(422);
    const text = textOf(refused.body);
    expect(text).toContain('The file was not imported: it has 2 problems. Nothing was changed.');
    expect(text).toContain(
      'Employee 1 (a@initech.example) of merit cycle 1 ("2026 Annual Merit"), field "lastName":',
    );
    expect(text).toContain(
      'Employee 2 (not-an-email) of merit cycle 1 ("2026 Annual Merit"), field "email":',
    );
    expect(await storedEmails()).toEqual(before);
    expect(stagedFiles()).toEqual([]);
  });

  it('a data set with more problems than shown: the page says how many more, and every one downloads as problems.csv (line, record, field, problem)', async () => {
    const before = await storedEmails();
    // A cycle of 60 employees without an email address, and one of 70 with the same one
    // (the repeats are looked for in a cycle without other problems): 60 + 69 problems.
    const cycle = webDataSet('initech').meritCycles[0];
    const employees = (emails: string[]) =>
      staffedDataSet('initech', emails).meritCycles[0]?.employees ?? [];
    const lines = [
      JSON.stringify({ organization: { slug: 'initech', name: 'Initech Corp' } }),
      JSON.stringify({ meritCycle: cycle }),
      ...employees(Array.from({ length: 60 }, (_, index) => `nobody-${index}`)).map((employee) =>
        JSON.stringify({ employee, meritCycle: '2026 Annual Merit' }),
      ),
      JSON.stringify({ meritCycle: { ...cycle, name: '2027 Annual Merit' } }),
      ...employees(Array.from({ length: 70 }, () => 'same@initech.example')).map((employee) =>
        JSON.stringify({ employee, meritCycle: '2027 Annual Merit' }),
      ),
    ];
    const refused = await check(owner, { name: 'many.ndjson', content: `${lines.join('\n')}\n` });
    expect(refused.status).toBe(422);
    const text = textOf(refused.body);
    expect(text).toContain('The file was not imported: it has 129 problems. Nothing was changed.');
    const shown = /<ol class="problems">[\s\S]*?<\/ol>/.exec(refused.body)?.[0] ?? '';
    expect(shown.match(/<li>/g)).toHaveLength(50);
    expect(textOf(shown)).toContain(
      'Line 3: employee 1 (nobody-0) of merit cycle 1 ("2026 Annual Merit"), field "email": must be an email address',
    );
    expect(text).toContain(
      'Download every problem (CSV) : each problem with its line, record and field, to work through in a spreadsheet.',
    );
    expect(text).toContain('And 79 more problems: Download every problem (CSV) to see every one.');
    expect(text).not.toContain('… and');

    const list = await owner.get(`${DATA}/problems.csv`);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(list.headers.get('content-disposition')).toBe('attachment; filename="problems.csv"');
    const rows = list.body.split('\r\n').filter((line) => line !== '');
    expect(rows).toHaveLength(1 + 129);
    expect(rows[0]).toBe('line,record,field,problem');
    expect(rows[1]).toBe(
      '3,"employee 1 (nobody-0) of merit cycle 1 (""2026 Annual Merit"")","field ""email""",must be an email address',
    );
    // Every repeat is listed (not only the first 51 a report keeps), each naming the first.
    expect(rows.at(-1)).toBe(
      '133,"employee 70 (same@initech.example) of merit cycle 2 (""2027 Annual Merit"")","field ""email""","repeats the email of employee 1 (same@initech.example) of merit cycle 2 (""2027 Annual Merit"") (emails compare case-insensitively)"',
    );
    expect(await storedEmails()).toEqual(before);
    expect(stagedFiles()).toEqual([]);
  });

  it('NDJSON problems name the line; CSV problems the row and column, with the same messages as the command line', async () => {
    const lines = [
      JSON.stringify({ organization: { slug: 'initech', name: 'Initech Corp' } }),
      '{"meritCycle": ',
    ];
    const ndjson = await check(owner, { name: 'data.ndjson', content: `${lines.join('\n')}\n` });
    expect(ndjson.status).toBe(422);
    expect(textOf(ndjson.body)).toMatch(/Line 2 is not valid JSON|line 2/i);

    const csv = await check(
      owner,
      {
        name: 'employees.csv',
        content:
          'email,firstName,lastName,currencyCode,eligibilityStatus\na@initech.example,A,B,USD,eligible\nnope,C,D,USD,eligible\n',
      },
      { format: 'csv', cycle: await cycleId() },
    );
    expect(csv.status).toBe(422);
    expect(textOf(csv.body)).toContain(
      'email : This is not an email address. (once) Write the employee’s email address, such as ada@example.com. More about this problem : This is not an email address. row 3, email: "nope"',
    );
    expect(stagedFiles()).toEqual([]);
  });

  it('a CSV file loads the chosen cycle’s employees', async () => {
    const content =
      'email,firstName,lastName,currencyCode,eligibilityStatus\na@initech.example,A,Changed,USD,eligible\n';
    const checked = await check(
      owner,
      { name: 'cycle.csv', content },
      { format: 'csv', cycle: await cycleId() },
    );
    expect(checked.status).toBe(303);
    const imported = await importChecked(owner, checked.location ?? '');
    expect(imported.status).toBe(303);
    expect(textOf((await owner.get(DATA)).body)).toContain(
      'employees 0 created, 1 updated, 0 unchanged, 0 removed',
    );
  });

  it('a spreadsheet as Excel writes it: the form’s choices read it; its problems download whole as CSV; the help page explains each', async () => {
    const semicolons =
      '\uFEFFemail;firstName;lastName;currencyCode;eligibilityStatus;Notes\r\na@initech.example;A;Semi;usd;Eligible;x\r\n';
    const refused = await check(
      owner,
      { name: 'excel.csv', content: semicolons },
      { format: 'csv', cycle: await cycleId() },
    );
    expect(refused.status).toBe(422);
    expect(textOf(refused.body)).toContain(
      "Read as: separator ';', encoding UTF-8 (with a byte order mark), dates YYYY-MM-DD, amounts 1234.56, eligibilityStatus in any letter case.",
    );
    const list = await owner.get(`${DATA}/problems.csv`);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(list.body).toBe(
      'row,column,value,problem\r\n1,Notes,Notes,"This column is not one the import knows. Rename it to a column the import reads (the merit cycle’s templates have them all), delete it, or choose “ignore columns the import does not know”."\r\n',
    );
    const checked = await check(
      owner,
      { name: 'excel.csv', content: semicolons },
      { format: 'csv', cycle: await cycleId(), ignoreUnknownColumns: 'on', dates: 'DD/MM/YYYY' },
    );
    expect(checked.status).toBe(303);
    expect((await importChecked(owner, checked.location ?? '')).status).toBe(303);
    expect(await storedEmails()).toContain('a@initech.example');

    const help = await owner.get('/app/help/import');
    expect(help.status).toBe(200);
    for (const kind of PROBLEM_KINDS) expect(help.body).toContain(`id="${kind}"`);
  });

  it('prune: the check counts who would go; the box removes them, and without it they stay', async () => {
    const file = { name: 'fewer.json', content: dataSetJson(['a@initech.example']) };
    const kept = await check(owner, file);
    expect(textOf((await owner.get(kept.location ?? '')).body)).toContain(
      'Also remove the 2 employees the file no longer lists',
    );
    await importChecked(owner, kept.location ?? '', false);
    expect(await storedEmails()).toHaveLength(3);
    const pruned = await check(owner, file);
    const done = await importChecked(owner, pruned.location ?? '', true);
    expect(done.status).toBe(303);
    expect(await storedEmails()).toEqual(['a@initech.example']);
    expect(textOf((await owner.get(DATA)).body)).toContain('1 unchanged, 2 removed');
  });

  it('refused when the data changed after the check: nothing imported, the checked file gone', async () => {
    const checked = await check(owner, {
      name: 'late.json',
      content: dataSetJson(['a@initech.example', 'late@initech.example']),
    });
    await server.load(staffedDataSet('initech', ['a@initech.example', 'cli@initech.example']));
    const refused = await importChecked(owner, checked.location ?? '');
    expect(refused.status).toBe(409);
    expect(textOf(refused.body)).toContain('The data changed after the check');
    expect(await storedEmails()).not.toContain('late@initech.example');
    expect(stagedFiles()).toEqual([]);
  });

  it('another organisation’s data set is refused', async () => {
    const refused = await check(owner, {
      name: 'globex.json',
      content: dataSetJson(['x@globex.example'], 'globex'),
    });
    expect(refused.status).toBe(422);
    expect(textOf(refused.body)).toContain(
      'the data set is of the organisation "globex"; only data of "initech" can be loaded here',
    );
    expect(await storedEmails('globex')).toEqual([]);
  });

  it('without the form’s token the upload is refused (403) and nothing is kept', async () => {
    const refused = await owner.upload(
      `${DATA}/check`,
      { format: 'data-set' },
      { name: 'x.json', content: dataSetJson(['a@initech.example']) },
    );
    expect(refused.status).toBe(403);
    expect(stagedFiles()).toEqual([]);
  });

  it('a Content-Length over the limit is refused at once (413), before the body is read', async () => {
    const _csrf = await owner.csrfToken(DATA);
    const answer = await rawUpload(owner, _csrf, { declared: 101 * MB, send: 1024, end: false });
    expect(answer.status).toBe(413);
    expect(answer.body).toContain('larger than 100 MiB');
    expect(stagedFiles()).toEqual([]);
  });

  it('a body that streams past the limit is cut off there (413): nothing kept', async () => {
    const _csrf = await owner.csrfToken(DATA);
    const answer = await rawUpload(owner, _csrf, { send: 101 * MB, end: true });
    expect(answer.status).toBe(413);
    expect(stagedFiles()).toEqual([]);
  });

  it('a second upload while one runs is refused with who and what; an abandoned one leaves nothing and frees the way', async () => {
    const admin = await signedIn('admin@initech.example', 'admin');
    const _csrf = await owner.csrfToken(DATA);
    const stalled = rawUpload(owner, _csrf, { send: 256 * 1024, end: false, abortAfterMs: 3000 });
    const abandoned = stalled.catch((error: Error) => error.message);
    await waitFor(async () => JSON.parse((await owner.get(`${DATA}/progress`)).body).running);
    const progress = JSON.parse((await owner.get(`${DATA}/progress`)).body);
    expect(progress).toMatchObject({
      running: true,
      phase: 'receiving',
      by: 'owner@initech.example',
    });
    const second = await check(admin, {
      name: 'x.json',
      content: dataSetJson(['a@initech.example']),
    });
    expect(second.status).toBe(409);
    expect(textOf(second.body)).toContain(
      'Another upload for Initech Corp is running: owner@initech.example is uploading a file',
    );
    expect(await abandoned).toBe('aborted');
    await waitFor(async () => !JSON.parse((await owner.get(`${DATA}/progress`)).body).running);
    expect(stagedFiles()).toEqual([]);
    const third = await check(admin, {
      name: 'x.json',
      content: dataSetJson(['a@initech.example']),
    });
    expect(third.status).toBe(303);
  });

  /** An upload sent by hand (test/helpers/uploads.ts); aborted after `abortAfterMs`. */
  function rawUpload(
    client: WebClient,
    csrf: string,
    options: { declared?: number; send: number; end: boolean; abortAfterMs?: number },
  ): Promise<{ status: number; body: string }> {
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const upload = sendUpload(`${server.url}${DATA}/check`, cookie, csrf, options);
    if (options.abortAfterMs !== undefined) setTimeout(() => upload.abort(), options.abortAfterMs);
    return upload.answer;
  }
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('the condition did not come true');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
