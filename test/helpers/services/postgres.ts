// A throwaway PostgreSQL cluster in a temp dir, on a free port, for the test suite:
// never the machine's own service. As root it runs as the `postgres` user (initdb
// refuses root), as anyone else as themselves.
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run } from './process.js';

export const POSTGRES_BIN = process.env.COMPPLAN_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export function postgresAvailable(): boolean {
  return existsSync(join(POSTGRES_BIN, 'initdb')) && existsSync(join(POSTGRES_BIN, 'pg_ctl'));
}

export interface PostgresCluster {
  /** Superuser URL of the `postgres` database. */
  readonly url: string;
  readonly port: number;
  /** The cluster's data directory (its postmaster.pid names the server's process). */
  readonly dataDir: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

async function asPostgres(command: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  return asRoot
    ? run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, command), ...args])
    : run(join(POSTGRES_BIN, command), args);
}

export async function startPostgres(): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  // Durability is worth nothing to a test database; speed is.
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const start = async () => {
    await asPostgres('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'postgres.log'),
      '-o',
      options,
      '-w',
      'start',
    ]);
  };
  const stop = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir: data,
    start,
    stop,
    async destroy() {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
