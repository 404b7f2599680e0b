// The database a test server runs on. The suite runs once per dialect (vitest projects,
// see vitest.config.ts): SQLite always; PostgreSQL when the suite is given a cluster.
// Every test server gets a database of its own, so test files never share state.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';

export type TestDialect = DatabaseConfig['dialect'];

export interface TestDatabase {
  readonly config: DatabaseConfig;
  drop(): Promise<void>;
}

/** The dialect of the running vitest project. */
export function testDialect(): TestDialect {
  return inject('dialect') ?? 'sqlite';
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = inject('postgresUrl');
  if (!url) throw new Error('the postgres project runs without a PostgreSQL cluster');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A PostgreSQL URL of `base` naming another database. */
export function withDatabaseName(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates database `name` in the cluster at `clusterUrl` (a superuser's URL); its config. */
export async function createDatabaseIn(
  clusterUrl: string,
  name: string,
): Promise<Extract<DatabaseConfig, { dialect: 'postgres' }>> {
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return { dialect: 'postgres', url: withDatabaseName(clusterUrl, name) };
}

export async function createTestDatabase(
  dialect: TestDialect = testDialect(),
): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'compplan-test-'));
    return {
      config: { dialect: 'sqlite', path: join(dir, 'compplan.db') },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `compplan_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  return {
    config: { dialect: 'postgres', url: withDatabaseName(inject('postgresUrl') ?? '', name) },
    async drop() {
      await admin((client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dialect: TestDialect;
    postgresUrl: string | undefined;
    redisUrl: string | undefined;
  }
}
