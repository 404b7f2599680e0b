// Settings → Connections' generate form and Settings → Audit log over real HTTP (both
// databases), for issue #44: a refused form comes back with every choice as it was sent
// (one table of refusal causes, each checked against every field), and the form, fixed and
// sent again, makes exactly the key it showed; the column picker offers the
// organisation's columns by type; a refusal speaks the form's words. The audit log's
// Column filter, and removed users and revoked keys kept, and marked, in its filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiKey, listApiKeys } from '../../src/api-keys/repository.js';
import { revokeApiKeyById } from '../../src/api-keys/service.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { removeUser } from '../../src/users/service.js';
import { PAY_CYCLES, payColumnsDataSet } from '../fixtures/pay-columns-data-set.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signedInClient, textOf, type WebClient } from '../helpers/web-client.js';

const ORG = 'paymasters';
const CONNECTIONS = '/app/settings/connections';
const AUDIT = '/app/settings/audit-log';
const DAY = 86_400_000;
const SECRET = /cpk_[0-9A-Za-z]{42}/;

/** A form that chooses something in every field. */
const FULL_FORM: Record<string, string> = {
  name: 'Finance BI',
  scope: 'some',
  [`cycle:${PAY_CYCLES.annual}`]: 'on',
  'column:basePay': 'on',
  'column:annualBonus': 'on',
  'columnType:number': 'on',
  otherColumns: 'equityGrant',
  allowUnknownColumns: 'on',
  expiresIn: '90d',
  allowIps: '10.20.0.0/24, 127.0.0.1',
};

/** An attribute's or a text's value, its entities decoded (the page's escaping). */
const decoded = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
/** textOf, with no space before a comma that follows markup (`<code>a</code>, <code>b</code>`). */
const wordsOf = (html: string) => textOf(html).replace(/ ,/g, ',');

/**
 * The generate form as a page shows it: each field's value, each ticked box and chosen
 * radio, each select's chosen option; empty fields left out, as a browser's post has them.
 */
function formShown(page: string): Record<string, string> {
  const form =
    /<form method="post" action="\/app\/settings\/connections\/keys"[\s\S]*?<\/form>/.exec(
      page,
    )?.[0];
  if (!form) throw new Error('no generate form');
  const shown: Record<string, string> = {};
  const attribute = (tag: string, name: string) => new RegExp(` ${name}="([^"]*)"`).exec(tag)?.[1];
  for (const [tag] of form.matchAll(/<input [^>]*>/g)) {
    const name = attribute(tag, 'name');
    const type = attribute(tag, 'type');
    if (name === undefined || type === 'hidden') continue;
    const value = decoded(attribute(tag, 'value') ?? '');
    if (type === 'checkbox' || type === 'radio') {
      if (/ checked[ >]/.test(tag)) shown[decoded(name)] = value;
    } else if (value !== '') shown[decoded(name)] = value;
  }
  for (const [, name = '', options = ''] of form.matchAll(
    /<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g,
  )) {
    const chosen = /<option value="([^"]*)" selected>/.exec(options)?.[1] ?? '';
    if (chosen !== '') shown[name] = decoded(chosen);
  }
  for (const [, name = '', text = ''] of form.matchAll(
    /<textarea [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g,
  )) {
    if (text !== '') shown[name] = decoded(text);
  }
  return shown;
}

describe('the generate form: a refused form keeps every choice; a key is made as the form showed', () => {
  let server: TestServer;
  let owner: WebClient;

  const keysOf = async (): Promise<ApiKey[]> =>
    listApiKeys(
      server.database.db,
      (await findOrganizationBySlug(server.database.db, ORG))?.id ?? '',
    );
  const generate = async (form: Record<string, string>) =>
    owner.post(`${CONNECTIONS}/keys`, { _csrf: await owner.csrfToken(CONNECTIONS), ...form });

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [payColumnsDataSet(ORG)] });
    owner = (await signedInClient(server, 'owner@pay.example', 'owner', ORG)).client;
  });
  afterAll(() => server.close());

  it('offers the organisation’s columns to tick, grouped by type, each by its name and key; the six types; no made-up placeholder', async () => {
    const page = (await owner.get(CONNECTIONS)).body;
    const groups = [
      ...page.matchAll(
        /<div class="column-group" role="group" aria-label="([^"]+)">([\s\S]*?)<\/div>/g,
      ),
    ].map(([, label, boxes = '']) => [label, textOf(boxes)]);
    expect(groups).toEqual([
      ['text columns', 'text Department department'],
      ['number columns', 'number Job Level jobLevel'],
      ['currency columns', 'currency Annual Bonus annualBonus Base Pay basePay'],
    ]);
    expect(textOf(/<div class="type-list">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '')).toBe(
      'text number date boolean currency composite',
    );
    expect(page).not.toContain('salary, bonus');
    expect(formShown(page)).toEqual({ scope: 'all' });
  });

  // Each cause changes one field of FULL_FORM; the page that refuses it shows every field
  // as sent, the wrong one included, so that correcting it changes nothing else.
  const causes: [cause: string, change: Record<string, string>, message: string][] = [
    [
      'a wildcard and a semicolon in the allowed addresses',
      { allowIps: '10.20.0.*; 127.0.0.1' },
      'Allowed addresses: “10.20.0.*” has a wildcard (*), which this field does not take: write the range as 10.20.0.0/24 (CIDR). Separate addresses with commas or new lines, not semicolons. It takes single addresses, such as 127.0.0.1 or 2001:db8::1, and CIDR ranges, such as 10.20.0.0/24, separated by commas or new lines.',
    ],
    [
      'an address that is not one',
      { allowIps: '10.0.0.0/40\n127.0.0.1' },
      'Allowed addresses: "10.0.0.0/40" is not an IP address or CIDR range, such as 203.0.113.0/24, 198.51.100.7 or 2001:db8::/32',
    ],
    ['a key name of spaces only', { name: '   ' }, 'A key name must have 1 to 200 characters'],
    [
      'merit cycles ticked under “Every merit cycle”',
      { scope: 'all' },
      'No API key was generated: merit cycles were ticked, but “Every merit cycle” was chosen.',
    ],
    [
      'a column key typed twice',
      { otherColumns: 'equityGrant, equityGrant' },
      'Hidden columns names equityGrant twice: give each once',
    ],
    [
      'an expiry date in the past',
      { expiresIn: '', expiresAt: '2020-01-31' },
      'Expiry date 2020-01-31 is in the past',
    ],
    [
      'an expiry and an expiry date both',
      { expiresAt: '2099-01-31' },
      'Give Expires or Expiry date, not both',
    ],
    [
      'an expiry that is not one of the choices (a post not made by the form)',
      { expiresIn: '90' },
      'Expires must be a number and a unit, such as 90d, 24h or 30m; got "90"',
    ],
  ];

  it.each(causes)(
    'refused for %s (422): nothing generated, every field shown as it was sent',
    async (_, change, message) => {
      const before = await keysOf();
      const sent = Object.fromEntries(
        Object.entries({ ...FULL_FORM, ...change }).filter(([, value]) => value !== ''),
      );
      const refused = await generate(sent);
      expect(refused.status).toBe(422);
      expect(textOf(refused.body)).toContain(message);
      expect(refused.body).not.toMatch(SECRET);
      expect(formShown(refused.body)).toEqual(sent);
      expect(await keysOf()).toEqual(before);
    },
  );

  it('a column key the data does not have, without “Columns of data still to come”, is refused naming the closest column and the form’s remedy, not the CLI flag', async () => {
    const sent: Record<string, string> = { ...FULL_FORM, otherColumns: 'salary' };
    delete sent.allowUnknownColumns;
    const refused = await generate(sent);
    expect(refused.status).toBe(422);
    const text = textOf(refused.body);
    expect(text).toContain(
      'Hidden columns: no column salary; did you mean basePay (Base Pay, currency)? Tick the column under Hidden columns instead; or, to hide a column your data does not have yet, tick “Columns of data still to come”.',
    );
    expect(text).not.toContain('--');
    expect(formShown(refused.body)).toEqual(sent);
  });

  it('the refused form, its address corrected and sent again, makes exactly the key it showed; the new-key box repeats what it reads', async () => {
    const refused = await generate({ ...FULL_FORM, allowIps: '10.20.0.*; 127.0.0.1' });
    expect(refused.status).toBe(422);
    const corrected = { ...formShown(refused.body), allowIps: '10.20.0.0/24\n127.0.0.1' };
    const before = Date.now();
    const made = await generate(corrected);
    expect(made.status).toBe(303);
    const [key] = (await keysOf()).filter((k) => k.name === 'Finance BI');
    expect(key).toMatchObject({
      cycles: [PAY_CYCLES.annual],
      hiddenColumns: ['annualBonus', 'basePay', 'equityGrant'],
      hiddenColumnTypes: ['number'],
      allowedAddresses: ['10.20.0.0/24', '127.0.0.1'],
    });
    const expires = Date.parse(key?.expiresAt ?? '');
    expect(expires).toBeGreaterThanOrEqual(before + 90 * DAY);
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY);

    const shown = (await owner.get(CONNECTIONS)).body;
    expect(shown).toMatch(SECRET);
    const facts = /<dl class="new-key-facts"[^>]*>([\s\S]*?)<\/dl>/.exec(shown)?.[1] ?? '';
    expect(wordsOf(facts)).toBe(
      `Merit cycles 2026 Annual Merit Hidden columns annualBonus, basePay, equityGrant Hidden types number Employees Every employee Expires ${key?.expiresAt?.slice(0, 10)} ${key?.expiresAt?.slice(11, 16)} UTC Allowed addresses 10.20.0.0/24, 127.0.0.1`,
    );
    // The form is empty again: the next key starts from nothing.
    expect(formShown(shown)).toEqual({ scope: 'all' });
  });

  it('a refused roll shows the roll page again with the grace period chosen, and rolls nothing', async () => {
    const [key] = (await keysOf()).filter((k) => k.name === 'Finance BI');
    const id = key?.id ?? '';
    const rollPage = `${CONNECTIONS}/keys/${id}/roll`;
    const _csrf = await owner.csrfToken(rollPage);
    await revokeApiKeyById(server.database.db, id);
    const refused = await owner.post(rollPage, { _csrf, grace: '7d' });
    expect(refused.status).toBe(422);
    expect(textOf(refused.body)).toContain(`API key ${id} is revoked: create a new key instead`);
    expect(refused.body).toContain('<option value="7d" selected>7 days</option>');
    const [after] = (await keysOf()).filter((k) => k.id === id);
    expect(after?.prefix).toBe(key?.prefix);
  });
});

describe('Settings → Audit log: the Column served filter; removed users and revoked keys in the filters', () => {
  let server: TestServer;
  let owner: WebClient;
  const rowsOf = (page: string) => page.match(/<th scope="row">/g)?.length ?? 0;

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [payColumnsDataSet(ORG)] });
    owner = (await signedInClient(server, 'owner@pay.example', 'owner', ORG)).client;
    const open = await server.createKey(ORG, 'Open', {});
    const withoutPay = await server.createKey(ORG, 'Without pay', { hiddenColumns: ['basePay'] });
    for (const key of [open, withoutPay]) {
      const read = await server.request(
        `/v1/compensationPlanning/meritCycles/${PAY_CYCLES.annual}/employees`,
        { key },
      );
      expect(read.status).toBe(200);
      await read.arrayBuffer();
    }
    await server.request('/ping', { key: open });
  });
  afterAll(() => server.close());

  it('offers every column of the organisation by name and key', async () => {
    const page = (await owner.get(AUDIT)).body;
    const select = /<select id="audit-column" name="column">([\s\S]*?)<\/select>/.exec(page)?.[1];
    expect(
      [...(select ?? '').matchAll(/<option value="([^"]*)">([^<]*)<\/option>/g)].map((m) => [
        m[1],
        m[2],
      ]),
    ).toEqual([
      ['', 'Any column'],
      ['annualBonus', 'Annual Bonus (annualBonus)'],
      ['basePay', 'Base Pay (basePay)'],
      ['department', 'Department (department)'],
      ['jobLevel', 'Job Level (jobLevel)'],
    ]);
  });

  it('shows only the entries whose columns served include the key chosen, each with its columns served', async () => {
    const basePay = await owner.get(`${AUDIT}?column=basePay`);
    expect(basePay.status).toBe(200);
    expect(rowsOf(basePay.body)).toBe(1);
    expect(wordsOf(basePay.body)).toContain(
      `GET /v1/compensationPlanning/meritCycles/${PAY_CYCLES.annual}/employees 200 3 employees Columns served: annualBonus, basePay, department, jobLevel`,
    );
    expect(basePay.body).toContain('<option value="basePay" selected>Base Pay (basePay)</option>');
    const jobLevel = await owner.get(`${AUDIT}?column=jobLevel`);
    expect(rowsOf(jobLevel.body)).toBe(2);
    expect(wordsOf(jobLevel.body)).toContain('Columns served: annualBonus, department, jobLevel');
    // A key no cycle has (a link kept after its cycle was removed): kept chosen, nothing served it.
    const gone = await owner.get(`${AUDIT}?column=salary`);
    expect(gone.status).toBe(200);
    expect(rowsOf(gone.body)).toBe(0);
    expect(gone.body).toContain('<option value="salary" selected>salary</option>');
  });

  it('keeps a removed user and a revoked key in the filters, marked “(removed)” and “(revoked)”', async () => {
    const { id } = await signedInClient(server, 'leaver@pay.example', 'admin', ORG);
    await removeUser(server.database.db, ORG, { id });
    const [revoked] = (
      await listApiKeys(
        server.database.db,
        (await findOrganizationBySlug(server.database.db, ORG))?.id ?? '',
      )
    ).filter((key) => key.name === 'Open');
    await revokeApiKeyById(server.database.db, revoked?.id ?? '');
    const page = await owner.get(`${AUDIT}?user=${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(
      `<option value="${id}" selected>leaver@pay.example (removed)</option>`,
    );
    expect(textOf(page.body)).toContain(`Open (${revoked?.prefix}…) (revoked)`);
    expect(page.body).toContain('>owner@pay.example</option>');
    // The leaver's sign-in is still found by the filter.
    expect(rowsOf(page.body)).toBeGreaterThanOrEqual(1);
    expect(textOf(page.body)).toContain('Signed in');
  });
});
