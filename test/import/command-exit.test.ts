// A command ends as soon as its work is done, on every database: it closes every
// connection it opened, those of its long work too (src/db/connect.ts, `close`). An
// import and the migrations run on the long-work connections alone; left open, they kept
// a PostgreSQL command's process alive for node-postgres's idle timeout of 10 s, which
// twenty imports of a million employees paid twenty times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet } from '../fixtures/data-sets.js';
import { runCli, stopAllProcesses, tempDatabase } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

// Far below the idle timeout a connection left open would hold the process for, and far
// above what the commands take on a busy machine (well under a second alone).
const WITHIN_MS = 5_000;

describe('a command that used the database', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let acmeFile: string;
  const files = tempDatabase();

  beforeAll(async () => {
    database = await createTestDatabase();
    const { config } = database;
    env = {
      LOG_LEVEL: 'silent',
      DATABASE_URL: config.dialect === 'sqlite' ? `sqlite:${config.path}` : config.url,
    };
    acmeFile = files.writeFile('acme.json', JSON.stringify(acmeDataSet()));
  });
  afterAll(async () => {
    await stopAllProcesses();
    await database?.drop();
    files.remove();
  });

  it('exits once the import is done: a new organisation, then the same file unchanged', async () => {
    for (const expected of ['(new organisation)', 'employees:']) {
      const result = await runCli(['import', acmeFile], { env, timeoutMs: WITHIN_MS });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(expected);
    }
  });

  it('exits once the migrations are done', async () => {
    const result = await runCli(['migrate'], { env, timeoutMs: WITHIN_MS });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('The database schema is up to date.\n');
  });
});
