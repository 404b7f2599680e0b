// Settings → Data's uploads are timed by their progress, not as a whole request, and never
// stick (docs/web-app.md, "Safety"): a slow upload that keeps arriving finishes past the
// whole-request bound; one that stalls is cut off after the idle bound (both given short
// here); a chunked body past 100 MiB is refused (413) as soon as it passes, before its end;
// and an instance killed mid-upload, or mid-import (SIGKILL, or SIGTERM past its grace),
// leaves its organisation free to upload again at once and its staged file gone — taken
// over by another instance running beside it, or by one starting. Over real HTTP, against
// `compplan serve` processes on both databases.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startCompplan } from '../helpers/services/compplan.js';
import { probeFor } from '../helpers/transaction-probe.js';
import { sendUpload } from '../helpers/uploads.js';
import { csrfTokenOf, signedInClient, staffedDataSet, WebClient } from '../helpers/web-client.js';

const DATA = '/app/settings/data';
const MB = 1024 * 1024;
// Employees of the data set an instance is killed importing (see bigDataSet).
const EMPLOYEES = 20_000;
// Short bounds: the whole request 1 s, an upload idle 1 s, looked at every 100 ms.
const TIMEOUTS = {
  requestMs: 1_000,
  uploadIdleMs: 1_000,
  uploadMinBytesPerSecond: 1024,
  checkIntervalMs: 100,
};

const temporary = mkdtempSync(join(tmpdir(), 'compplan-upload-slots-test-'));
const previousTmpdir = process.env.TMPDIR;
process.env.TMPDIR = temporary;

/** Every staging directory, with its files. */
const staging = () =>
  readdirSync(temporary)
    .filter((name) => name.startsWith('compplan-import-staging-'))
    .map((directory) => ({ directory, files: readdirSync(join(temporary, directory)) }));
const stagedFiles = () => staging().flatMap(({ files }) => files);

describe('Settings → Data: uploads timed by progress, slots that never stick', () => {
  let server: TestServer;
  let owner: WebClient;

  const slots = async () => {
    const { rows } = await sql<{ phase: string }>`select phase from upload_slots`.execute(
      server.database.db,
    );
    return rows.map((row) => row.phase);
  };

  function upload(url: string, csrf: string, options: Parameters<typeof sendUpload>[3]) {
    const cookie = [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    return sendUpload(`${url}${DATA}/check`, cookie, csrf, options);
  }

  beforeAll(async () => {
    server = await startTestServer({
      dataSets: [staffedDataSet('initech', ['a@initech.example'])],
      timeouts: TIMEOUTS,
    });
    owner = (await signedInClient(server, 'owner@initech.example', 'owner')).client;
  });
  afterAll(async () => {
    await server.close();
    rmSync(temporary, { recursive: true, force: true });
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
  });

  it('an upload that keeps arriving is not cut by the whole-request bound', async () => {
    const _csrf = await owner.csrfToken(DATA);
    const started = Date.now();
    // 24 pieces of 2 KiB, one every 100 ms: 2.4 s, over twice the whole-request bound.
    const answer = await upload(server.url, _csrf, {
      send: 48 * 1024,
      end: true,
      gapMs: 100,
      pieceBytes: 2048,
    }).answer;
    expect(Date.now() - started).toBeGreaterThan(2 * TIMEOUTS.requestMs);
    // Received whole and checked: the file is not a data set, which the check says.
    expect(answer.status).toBe(422);
    expect(await slots()).toEqual([]);
    expect(stagedFiles()).toEqual([]);
  });

  it('an upload that stalls is cut off after the idle bound (408): slot and file freed', async () => {
    const _csrf = await owner.csrfToken(DATA);
    const started = Date.now();
    const stalled = upload(server.url, _csrf, { send: 256 * 1024, end: false });
    const answer = await stalled.answer;
    const elapsed = Date.now() - started;
    stalled.abort();
    expect(answer.status).toBe(408);
    expect(answer.body).toContain('The upload stopped: nothing arrived for a while');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUTS.uploadIdleMs);
    expect(elapsed).toBeLessThan(TIMEOUTS.uploadIdleMs + 2_000);
    expect(await slots()).toEqual([]);
    expect(stagedFiles()).toEqual([]);
  });

  it('a chunked body past 100 MiB is refused (413) as it passes, not at its end: slot and file freed', async () => {
    const _csrf = await owner.csrfToken(DATA);
    // 100 MiB and one chunk more, never ended: the answer comes all the same.
    const past = upload(server.url, _csrf, { send: 100 * MB + 64 * 1024, end: false });
    const answer = await past.answer;
    past.abort();
    expect(answer.status).toBe(413);
    expect(answer.body).toContain('larger than 100 MiB');
    expect(await slots()).toEqual([]);
    expect(stagedFiles()).toEqual([]);
  }, 60_000);

  it('an instance killed mid-upload: another instance frees its slot and its staged file', async () => {
    const env = { DATABASE_URL: server.databaseUrl, TMPDIR: temporary };
    const first = await startCompplan(env);
    let second: Awaited<ReturnType<typeof startCompplan>> | undefined;
    try {
      const _csrf = await owner.csrfToken(DATA);
      const held = upload(first.url, _csrf, { send: 256 * 1024, end: false });
      held.answer.catch(() => undefined);
      await waitFor(async () => stagedFiles().length === 1 && (await slots()).length === 1);
      expect(await slots()).toEqual(['receiving']);
      const killed = staging().find(({ files }) => files.length === 1)?.directory ?? '';
      expect(killed).toMatch(new RegExp(`^compplan-import-staging-${first.pid}-`));

      process.kill(first.pid, 'SIGKILL');
      await first.stop();
      held.abort();
      // A new instance on this host: the killed one's staged file goes as it starts, and
      // the organisation may upload again at once (its slot's process is gone).
      second = await startCompplan(env);
      expect(staging().map(({ directory }) => directory)).not.toContain(killed);
      expect(stagedFiles()).toEqual([]);
      const again = await upload(second.url, await owner.csrfToken(DATA), {
        send: 1024,
        end: true,
      }).answer;
      expect(again.status).toBe(422);
      expect(await slots()).toEqual([]);
    } finally {
      await second?.stop();
      await first.stop();
    }
  }, 120_000);

  it.each([
    { takenBy: 'an instance running beside it', restart: false },
    { takenBy: 'the instance restarted', restart: true },
  ])(
    'an instance killed mid-import: nothing of the import is written, and $takenBy takes the slot at once and removes the staged file',
    async ({ restart }) => {
      const env = { DATABASE_URL: server.databaseUrl, TMPDIR: temporary };
      const first = await startCompplan(env);
      let second = restart ? undefined : await startCompplan(env);
      const probe = await probeFor(server.databaseConfig);
      const employees = async () => {
        const { rows } = await sql<{ n: number | string }>`
          select count(*) as n from merit_cycle_employees`.execute(server.database.db);
        return Number(rows[0]?.n);
      };
      try {
        // The owner's session, on the first instance (sessions are in the database).
        const atFirst = new WebClient(first.url);
        for (const [name, value] of owner.cookies) atFirst.cookies.set(name, value);
        const checked = await atFirst.upload(
          `${DATA}/check`,
          { _csrf: await atFirst.csrfToken(DATA), format: 'data-set' },
          { name: 'big.ndjson', content: bigDataSet(EMPLOYEES) },
        );
        expect(checked.status).toBe(303);
        const page = await atFirst.get(checked.location ?? '');
        const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
        expect(stagedFiles()).toHaveLength(1);
        const before = await employees();

        const importing = atFirst.post(`${DATA}/import`, { _csrf: csrfTokenOf(page.body), token });
        importing.catch(() => undefined);
        // Inside the import's transaction: the slot says importing, and the database has
        // the transaction open (test/helpers/transaction-probe.ts).
        await waitFor(
          async () => (await slots()).join() === 'importing' && (await probe.inTransaction()),
          60_000,
        );
        process.kill(first.pid, 'SIGKILL');
        await first.stop();
        await importing.catch(() => undefined);

        // Nothing of the import was written; the killed instance left its slot and its
        // staged file behind...
        expect(await employees()).toBe(before);
        expect(await slots()).toEqual(['importing']);
        const killed = staging().find(({ directory }) =>
          directory.startsWith(`compplan-import-staging-${first.pid}-`),
        );
        expect(killed?.files).toEqual([token]);
        // (A restarted instance removes the files of processes gone as it starts.)
        second ??= await startCompplan(env);

        // ... which the other instance takes at once: the organisation uploads again.
        const again = await upload(second.url, await owner.csrfToken(DATA), {
          send: 1024,
          end: true,
        }).answer;
        expect(again.status).toBe(422);
        expect(again.body).not.toContain('Another upload');
        expect(await slots()).toEqual([]);
        expect(staging().map(({ directory }) => directory)).not.toContain(killed?.directory);
        expect(stagedFiles()).toEqual([]);
      } finally {
        await probe.close();
        await Promise.all([first.stop(), second?.stop()]);
      }
    },
    180_000,
  );
});

/**
 * An NDJSON data set of initech's cycle with `count` employees: large enough that its
 * import's transaction runs for a few seconds here, time to kill the instance inside it.
 */
function bigDataSet(count: number): string {
  const { organization, meritCycles } = staffedDataSet('initech', ['x@initech.example']);
  const [{ employees: [employee] = [], ...cycle }] = meritCycles as [(typeof meritCycles)[number]];
  const lines = [JSON.stringify({ organization }), JSON.stringify({ meritCycle: cycle })];
  for (let i = 0; i < count; i++) {
    const email = `person${i}@initech.example`;
    lines.push(JSON.stringify({ employee: { ...employee, email }, meritCycle: cycle.name }));
  }
  return `${lines.join('\n')}\n`;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('the condition did not come true');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
