// Row slices in the web app over real HTTP (issue #48, decisions §12): the generate form's
// Rows and Reports to fields, the count before the key is made (the "Count employees" post
// and the script's JSON), a refused slice keeping every choice, the new-key box and the
// list repeating the slice; the manager column under Roles & Permissions.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MATRIX_CYCLE, MATRIX_ORG, slicedDataSet } from '../fixtures/sliced-data-set.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signedInClient, textOf, type WebClient } from '../helpers/web-client.js';

const CONNECTIONS = '/app/settings/connections';
const ROLES = '/app/settings/roles';

const decoded = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
const fieldValue = (page: string, id: string) =>
  decoded(new RegExp(`<input id="${id}"[^>]* value="([^"]*)"`).exec(page)?.[1] ?? '(no field)');
const countShown = (page: string) =>
  textOf(/<p class="slice-count[^"]*" id="slice-count"[^>]*>([\s\S]*?)<\/p>/.exec(page)?.[1] ?? '');
const errorShown = (page: string) =>
  textOf(/<div class="notice notice-error"[^>]*>([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '');

describe('Settings → Connections: a key for a slice of the organisation', () => {
  let server: TestServer;
  let owner: WebClient;
  const post = async (path: string, form: Record<string, string>) =>
    owner.request('POST', path, {
      form: { _csrf: await owner.csrfToken(CONNECTIONS), ...form },
    });

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [slicedDataSet()] });
    owner = (await signedInClient(server, 'owner@matrixco.example', 'owner', MATRIX_ORG)).client;
  });
  afterAll(() => server.close());

  it('offers Rows with an example and the organisation’s text columns and text parts; without a manager column, a note instead of Reports to', async () => {
    const page = (await owner.request('GET', CONNECTIONS)).body;
    expect(page).toContain(
      'placeholder="e.g. department in (Engineering, Sales) and country = DE"',
    );
    expect(
      textOf(
        /<p class="hint column-names" id="rows-columns">([\s\S]*?)<\/p>/.exec(page)?.[1] ?? '',
      ),
    ).toBe('Text columns you can name: department , employee/jobTitle , manager , managerEmail .');
    expect(page).not.toContain('name="reportsTo"');
    expect(
      textOf(/<p class="hint" id="reports-to-note">([\s\S]*?)<\/p>/.exec(page)?.[1] ?? ''),
    ).toBe(
      "To give a key one manager's reporting line, an owner first names the column that holds each employee's manager's email: the manager column , under Roles & Permissions.",
    );
  });

  it('"Count employees" shows the form again, every choice kept, with what the slice reads today; nothing is made', async () => {
    const response = await post(`${CONNECTIONS}/keys/count`, {
      name: 'Sales BI',
      rows: 'department = Sales',
      scope: 'some',
      [`cycle:${MATRIX_CYCLE.annual}`]: 'on',
      expiresIn: '30d',
    });
    expect(response.status).toBe(200);
    expect(countShown(response.body)).toBe(
      'Reads 2 employees today: those where department = Sales.',
    );
    expect(fieldValue(response.body, 'key-name')).toBe('Sales BI');
    expect(fieldValue(response.body, 'rows')).toBe('department = Sales');
    expect(response.body).toContain(`name="cycle:${MATRIX_CYCLE.annual}" value="on" checked`);
    expect(response.body).toContain('<option value="30d" selected>');
    expect(response.body).toContain('No API keys yet.');
  });

  it('counts nobody in plain words, with what to check', async () => {
    const response = await post(`${CONNECTIONS}/keys/count`, { rows: 'department = sales' });
    expect(countShown(response.body)).toBe(
      'Reads nobody today: no employee has department = sales. Check the values and their letter case, as your data writes them.',
    );
  });

  it('answers the script’s count as JSON, for the signed-in person’s organisation, every cycle unless cycles are named', async () => {
    const ask = async (query: string) => {
      const response = await owner.request('GET', `${CONNECTIONS}/slice-count?${query}`, {
        headers: { accept: 'application/json' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      return JSON.parse(response.body) as unknown;
    };
    expect(await ask('rows=department%20in%20(Sales%2C%20Finance)')).toEqual({
      text: 'Reads 3 employees today: those where department in (Finance, Sales).',
      employees: 3,
    });
    expect(
      await ask(`rows=department%20in%20(Sales%2C%20Finance)&cycles=${MATRIX_CYCLE.midYear}`),
    ).toEqual({
      text: 'Reads 1 employee today: those where department in (Finance, Sales).',
      employees: 1,
    });
    expect(await ask('rows=salary%20%3D%201')).toEqual({
      text: expect.stringMatching(/^Rows: matrixco has no column salary/),
      problem: true,
    });
    expect(await ask('rows=')).toEqual({ text: '' });
    const stranger = new (owner.constructor as typeof WebClient)(server.url);
    const refused = await stranger.request('GET', `${CONNECTIONS}/slice-count?rows=a%3Db`);
    expect(refused.status).not.toBe(200);
  });

  it('a refused slice (an unknown column) keeps every choice and says what is wrong in the form’s words; no key is made', async () => {
    const response = await post(`${CONNECTIONS}/keys`, {
      name: 'Regional BI',
      rows: 'department = Sales and region = EMEA',
      allowIps: '127.0.0.1',
    });
    expect(response.status).toBe(422);
    expect(errorShown(response.body)).toMatch(/^Rows: matrixco has no column region/);
    expect(fieldValue(response.body, 'key-name')).toBe('Regional BI');
    expect(fieldValue(response.body, 'rows')).toBe('department = Sales and region = EMEA');
    expect(response.body).toContain('>127.0.0.1</textarea>');
    expect(response.body).toContain('No API keys yet.');
  });

  it('a slice that cannot be read is refused with where: the character and the remedy', async () => {
    const response = await post(`${CONNECTIONS}/keys`, { name: 'Bad', rows: 'department in (' });
    expect(response.status).toBe(422);
    expect(errorShown(response.body)).toMatch(/^Rows could not be read/);
    expect(fieldValue(response.body, 'rows')).toBe('department in (');
  });

  it('the new-key box repeats the slice and its count; the list shows each key’s slice', async () => {
    const made = await post(`${CONNECTIONS}/keys`, {
      name: 'Sales BI',
      rows: 'department = Sales',
    });
    expect(made.status).toBe(303);
    const page = (await owner.request('GET', CONNECTIONS)).body;
    const facts = textOf(/<dl class="new-key-facts"[^>]*>([\s\S]*?)<\/dl>/.exec(page)?.[1] ?? '');
    expect(facts).toContain('Employees Reads 2 employees today: those where department = Sales.');
    const row = /<tr>\s*<th scope="row">Sales BI[\s\S]*?<\/tr>/.exec(page)?.[0] ?? '';
    expect(textOf(row)).toContain('Only where department = Sales');
  });

  it('rolling a sliced key repeats its slice and today’s count in the new-key box', async () => {
    const page = (await owner.request('GET', CONNECTIONS)).body;
    const roll =
      /href="(\/app\/settings\/connections\/keys\/key_[^"]+\/roll)"/.exec(page)?.[1] ?? '';
    const rolled = await owner.request('POST', roll, {
      form: { _csrf: await owner.csrfToken(roll), grace: '1h' },
    });
    expect(rolled.status).toBe(303);
    const shown = (await owner.request('GET', CONNECTIONS)).body;
    const facts = textOf(/<dl class="new-key-facts"[^>]*>([\s\S]*?)<\/dl>/.exec(shown)?.[1] ?? '');
    expect(facts).toContain('Employees Reads 2 employees today: those where department = Sales.');
  });

  it('Roles & Permissions names the manager column (a select of text columns and parts), audited; then Reports to is offered and counted', async () => {
    const roles = (await owner.request('GET', ROLES)).body;
    const options = [...roles.matchAll(/<option value="([^"]*)"/g)].map(([, value]) => value);
    expect(options).toEqual(['', 'department', 'employee/jobTitle', 'manager', 'managerEmail']);
    const saved = await owner.request('POST', `${ROLES}/manager-column`, {
      form: { _csrf: await owner.csrfToken(ROLES), managerColumn: 'managerEmail' },
    });
    expect(saved.status).toBe(303);
    const after = (await owner.request('GET', saved.location ?? ROLES)).body;
    expect(textOf(after)).toContain(
      'Saved: the manager column is managerEmail. No reporting loop found.',
    );
    expect(after).toContain('<option value="managerEmail" selected>');
    const audit = (await owner.request('GET', '/app/settings/audit-log')).body;
    expect(textOf(audit)).toContain('Settings changed');

    const counted = await post(`${CONNECTIONS}/keys/count`, {
      reportsTo: 'Person1@matrixco.example',
    });
    expect(fieldValue(counted.body, 'reports-to')).toBe('Person1@matrixco.example');
    expect(countShown(counted.body)).toBe(
      'Reads 3 employees today: those where reports to person1@matrixco.example.',
    );
    const unknown = await post(`${CONNECTIONS}/keys`, {
      name: 'Team',
      reportsTo: 'nobody@matrixco.example',
    });
    expect(unknown.status).toBe(422);
    expect(errorShown(unknown.body)).toMatch(
      /^Reports to: no employee with the email nobody@matrixco.example/,
    );
    expect(fieldValue(unknown.body, 'reports-to')).toBe('nobody@matrixco.example');
  });

  it('Roles & Permissions lists the reporting loops the data has, in plain words, by cycle', async () => {
    await server.load(slicedDataSet({ loop: true }));
    const roles = textOf((await owner.request('GET', ROLES)).body);
    expect(roles).toContain(
      'Reporting loops found: these people report to each other in a circle, so none of them reaches the top.',
    );
    expect(roles).toContain(
      'Matrix 2025: person1@matrixco.example → person4@matrixco.example → person3@matrixco.example → person1@matrixco.example',
    );
  });
});

describe('the audit log shows the slice a request was read through', () => {
  let server: TestServer;
  let owner: WebClient;
  const EMPLOYEES = `/v1/compensationPlanning/meritCycles/${MATRIX_CYCLE.annual}/employees`;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [slicedDataSet()] });
    owner = (await signedInClient(server, 'owner@matrixco.example', 'owner', MATRIX_ORG)).client;
    const sliced = await server.createKey(MATRIX_ORG, 'Sales feed', {
      rows: 'department = Sales',
    });
    const whole = await server.createKey(MATRIX_ORG, 'Whole feed');
    expect((await server.request(EMPLOYEES, { key: sliced })).status).toBe(200);
    expect((await server.request(EMPLOYEES, { key: whole })).status).toBe(200);
    await server.app.audit.flush();
  });
  afterAll(() => server.close());

  it('Settings → Audit log: a Rows detail on the request read through a slice, none on the other; the key filter still works', async () => {
    const page = (await owner.request('GET', '/app/settings/audit-log?action=api.request')).body;
    const details = [
      ...page.matchAll(/<span class="value audit-details">([\s\S]*?)<\/span><\/td>/g),
    ].map(([, cell = '']) => textOf(cell));
    expect(details).toHaveLength(2);
    expect(
      details.filter((cell) => cell.includes('Rows: only where department = Sales')),
    ).toHaveLength(1);
    expect(details.filter((cell) => cell.includes('Rows:'))).toHaveLength(1);
    const keyId = /<option value="(key_[^"]+)"[^>]*>Sales feed/.exec(page)?.[1] ?? '';
    const filtered = (
      await owner.request('GET', `/app/settings/audit-log?key=${keyId}&action=api.request`)
    ).body;
    const only = [
      ...filtered.matchAll(/<span class="value audit-details">([\s\S]*?)<\/span><\/td>/g),
    ];
    expect(
      only.map(([, cell = '']) => textOf(cell).includes('Rows: only where department = Sales')),
    ).toEqual([true]);
  });

  it('compplan audit list has a ROWS column ("all" for a key of every employee); audit export a rowSlice column', async () => {
    const env = { DATABASE_URL: server.databaseUrl };
    const listed = await runCli(['audit', 'list', '--org', MATRIX_ORG], { env });
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^TIME\s+ACTION\s+KEY OR ACTOR\s+WHAT\s+ROWS\s+FROM/);
    const requests = lines.filter((line) => line.includes('api.request'));
    expect(requests).toHaveLength(2);
    expect(requests.filter((line) => line.includes('department = Sales'))).toHaveLength(1);
    expect(requests.filter((line) => / all /.test(line))).toHaveLength(1);

    const out = join(tmpdir(), `row-slices-audit-${process.pid}.csv`);
    try {
      const exported = await runCli(['audit', 'export', '--org', MATRIX_ORG, '-o', out], { env });
      expect(exported.code).toBe(0);
      const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[];
      expect(
        rows
          .filter((row) => row.action === 'api.request')
          .map((row) => row.rowSlice)
          .sort(),
      ).toEqual(['', 'department = Sales']);
    } finally {
      rmSync(out, { force: true });
    }
  });
});
