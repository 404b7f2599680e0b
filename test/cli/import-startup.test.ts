// An import runs as one process per file (bench/data.ts: twenty of them for a million
// employees), so what a process loads before its first record counts twenty times. An
// import into SQLite must not load the PostgreSQL driver (src/db/connect.ts loads it only
// for a postgres URL), nor what only the server uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeDataSet } from '../fixtures/data-sets.js';
import { runCli, stopAllProcesses, type TempDatabase, tempDatabase } from '../helpers/cli.js';

// Preloaded into the CLI (node --require): at exit, the packages CommonJS loaded (pg is
// CommonJS, however it is imported, so it is always in require.cache once loaded).
const REPORT = `process.on('exit', () => {
  const loaded = new Set(Object.keys(require.cache).flatMap((file) => {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file);
    return match ? [match[1]] : [];
  }));
  process.stderr.write('loaded: ' + [...loaded].sort().join(' ') + '\\n');
});
`;

function loadedPackages(stderr: string): string[] {
  const line = stderr.split('\n').find((text) => text.startsWith('loaded: '));
  return line ? line.slice('loaded: '.length).split(' ') : [];
}

describe('compplan import start-up', () => {
  let db: TempDatabase;
  let acmeFile: string;
  let report: string;

  beforeAll(() => {
    db = tempDatabase();
    acmeFile = db.writeFile('acme.json', JSON.stringify(acmeDataSet()));
    report = db.writeFile('report-loaded.cjs', REPORT);
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('an import into SQLite loads neither the PostgreSQL driver nor the server', async () => {
    const result = await runCli(['import', acmeFile], {
      env: { ...db.env, NODE_OPTIONS: `--require ${report}` },
    });
    expect(result.code, result.stderr).toBe(0);
    const loaded = loadedPackages(result.stderr);
    expect(loaded).toContain('better-sqlite3');
    for (const name of ['pg', 'pg-pool', 'ioredis', 'fastify']) {
      expect(loaded, name).not.toContain(name);
    }
  });
});
