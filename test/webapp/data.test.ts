// Settings → Data over real HTTP (both dialects): the organisation's merit cycles with
// status, employee count (kept by every import) and last import; owners and
// administrators; another organisation's cycles never shown.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migratorOf } from '../../src/db/migrate.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signedInClient, staffedDataSet, textOf, WebClient } from '../helpers/web-client.js';

const _PASSWORD = 'a long enough password';
const DATA = '/app/settings/data';

describe('Settings → Data', () => {
  let server: TestServer;

  const signedIn = async (email: string, role: 'owner' | 'admin', org = 'initech') =>
    (await signedInClient(server, email, role, org)).client;

  const storedCount = async () => {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n
      from merit_cycle_employees e join organizations o on o.id = e.organization_id
      where o.slug = 'initech'`.execute(server.database.db);
    return Number(rows[0]?.n);
  };

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [
        staffedDataSet('initech', ['a@initech.example', 'b@initech.example', 'c@initech.example']),
        staffedDataSet('globex', ['z@globex.example']),
      ],
    });
  });
  afterAll(() => server.close());

  it('lists the cycles with status, employee count and the last import (by the command line), for owners and administrators', async () => {
    for (const client of [
      await signedIn('owner@initech.example', 'owner'),
      await signedIn('admin@initech.example', 'admin'),
    ]) {
      const page = await client.get(DATA);
      expect(page.status).toBe(200);
      const text = textOf(page.body);
      expect(text).toMatch(
        /2026 Annual Merit mc_\S+ Active 3 \d{4}-\d\d-\d\d \d\d:\d\d UTC by the command line 3 created, 0 updated, 0 unchanged, 0 removed/,
      );
      expect(text).not.toContain('globex');
      expect(page.body).toContain(`href="${DATA}" aria-current="page"`);
    }
  });

  it('the count follows each import (created, pruned) and matches the stored employees', async () => {
    const client = await signedIn('counter@initech.example', 'owner');
    await server.load(staffedDataSet('initech', ['a@initech.example', 'd@initech.example']), {
      prune: true,
    });
    const text = textOf((await client.get(DATA)).body);
    expect(text).toMatch(
      /Active 2 .* by the command line 1 created, 0 updated, 1 unchanged, 2 removed/,
    );
    expect(await storedCount()).toBe(2);
    await server.load(staffedDataSet('initech', ['e@initech.example']));
    expect(textOf((await client.get(DATA)).body)).toMatch(
      /Active 3 .* 1 created, 0 updated, 0 unchanged, 0 removed/,
    );
    expect(await storedCount()).toBe(3);
  });

  it('migration 0014 counts each cycle’s stored employees once; the last import is then unknown', async () => {
    const client = await signedIn('migrator@initech.example', 'owner');
    const down = await migratorOf(server.database).migrateTo('0013-column-schema');
    expect(down.error).toBeUndefined();
    expect(await migrateToLatest(server.database)).toEqual([
      '0014-web-management',
      '0015-audit-columns-served',
      '0016-hidden-column-types',
      '0017-upload-slots',
      '0018-row-slices',
      '0019-upload-problems',
      '0020-flat-lines',
    ]);
    const text = textOf((await client.get(DATA)).body);
    expect(text).toContain('2026 Annual Merit');
    expect(text).toMatch(/Active 3 Before records were kept/);
  });

  it('signed out, the page leads to sign-in', async () => {
    const page = await new WebClient(server.url).get(DATA);
    expect(page.status).toBe(303);
    expect(page.location).toBe('/app/sign-in');
  });
});
