// The databases a benchmark measures, one after the other: SQLite in a file of a temp
// folder, PostgreSQL as a throwaway cluster (test/helpers/services/postgres.ts) — each
// removed once measured, whatever happened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from '../test/helpers/services/postgres.js';

export type BenchDatabase = 'sqlite' | 'postgres';

/** `measure(name, DATABASE_URL, its temp folder)` for each database, in the order given. */
export async function forEachDatabase<Result>(
  databases: readonly BenchDatabase[],
  folderPrefix: string,
  measure: (name: 'SQLite' | 'PostgreSQL', url: string, dir: string) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = [];
  for (const database of databases) {
    const dir = mkdtempSync(join(tmpdir(), folderPrefix));
    try {
      if (database === 'sqlite') {
        results.push(await measure('SQLite', `sqlite:${join(dir, 'bench.db')}`, dir));
      } else {
        const cluster = await startPostgres();
        try {
          results.push(await measure('PostgreSQL', cluster.url, dir));
        } finally {
          await cluster.destroy();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}
