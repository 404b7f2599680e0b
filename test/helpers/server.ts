// Starts the real app on a free loopback port over a real database, loaded through the
// real import path. Each call gets its own database, so test files never share state.
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createApiKey, type NewKeyInput } from '../../src/api-keys/service.js';
import { buildApp, type ServerTimeouts } from '../../src/app.js';
import {
  type Config,
  type DatabaseConfig,
  DEFAULT_CHANGE_RETENTION_DAYS,
  type WebhookConfig,
} from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { type ImportOptions, type ImportSummary, importDataSet } from '../../src/import/load.js';
import type { DataSetInput } from '../../src/import/schema.js';
import type { PasswordHashing } from '../../src/users/password.js';
import { WEBHOOK_SCHEDULE, type WebhookSchedule } from '../../src/webhooks/schedule.js';
import { createTestDatabase } from './databases.js';
import { assertConformsToContract } from './openapi-contract.js';
import { TEST_PASSWORD_HASHING } from './set-up.js';

export interface TestServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  app: FastifyInstance;
  database: DatabaseHandle;
  /** The server's database, to open another connection to it. */
  databaseConfig: DatabaseConfig;
  /** The same database as DATABASE_URL names it, for `compplan` commands beside the server. */
  databaseUrl: string;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Loads a data set through the import path, as `compplan import` does. */
  load(dataSet: DataSetInput, options?: ImportOptions): Promise<ImportSummary>;
  /**
   * Generates a key for an organisation (whose API keys must be enabled), optionally
   * restricted (cycles, hidden columns, expiry); returns the secret.
   */
  createKey(
    org: string,
    name?: string,
    restrictions?: Omit<NewKeyInput, 'org' | 'name'>,
  ): Promise<string>;
  /** GET (or another method) with the given key; `key: null` sends no key. */
  request(
    path: string,
    options?: { key?: string | null; method?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  dataSets?: DataSetInput[];
  /** Requests per second per key; tests that do not test the limit set it high. */
  rateLimitPerSecond?: number;
  database?: DatabaseConfig;
  /** TRUST_PROXY: proxies whose X-Forwarded-For/-Proto are believed. */
  trustProxy?: string[];
  /** Shared rate-limit store (REDIS_URL); absent: the in-process store. */
  redisUrl?: string;
  /** The clock the server compares key expiry with (a TestClock's now): tests never sleep. */
  now?: () => number;
  /** The clock of the key verifier's confirmation window (a TestClock's now). */
  monotonic?: () => number;
  /** CHANGE_RETENTION_DAYS; the default (30) when absent. */
  changeRetentionDays?: number;
  /** Runs a webhook dispatcher with this configuration, as `compplan serve` does. */
  webhooks?: WebhookConfig;
  /** The dispatcher's retry delays, lease and poll (scaledSchedule); the real ones when absent. */
  webhookSchedule?: WebhookSchedule;
  /** Shorter HTTP server timeouts, for a test to see them act in a second, not 10. */
  timeouts?: Partial<ServerTimeouts>;
  /** How many audit log entries the server keeps while the database refuses them. */
  auditBufferLimit?: number;
  /** The audit log's writes in their thread, as `compplan serve` has them. */
  auditWriterThread?: boolean;
  /** The cost of the password hashes the app makes; TEST_PASSWORD_HASHING when absent. */
  passwordHashing?: PasswordHashing;
}

/**
 * The real webhook schedule with every retry delay multiplied by `scale` (e.g. 0.001: five
 * minutes in 300 ms), so that a test sees retries in seconds instead of days. The lease
 * stays at least 1 s: an attempt in flight must keep it. The poll is the real one unless
 * `pollMs` is given: a test whose deliveries are recorded outside the server (an import,
 * as `compplan import` records them) waits for it before each first attempt.
 */
export function scaledSchedule(scale: number, pollMs = WEBHOOK_SCHEDULE.pollMs): WebhookSchedule {
  return {
    retryDelaysMs: WEBHOOK_SCHEDULE.retryDelaysMs.map((delay) => Math.round(delay * scale)),
    leaseMs: Math.max(1_000, Math.round(WEBHOOK_SCHEDULE.leaseMs * scale)),
    pollMs,
  };
}

export { TestClock } from './clock.js';

/** Tests that do not exercise the rate limit must never meet it. */
export const UNLIMITED = 1_000_000;

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  // A database given by the test is the test's to clean up; one made here is dropped here.
  const testDatabase = options.database
    ? { config: options.database, drop: async () => undefined }
    : await createTestDatabase();
  const databaseConfig = testDatabase.config;
  const config: Config = {
    port: 0,
    host: '127.0.0.1',
    database: databaseConfig,
    redisUrl: options.redisUrl,
    rateLimitPerSecond: options.rateLimitPerSecond ?? UNLIMITED,
    logLevel: 'info',
    metricsPort: undefined,
    trustProxy: options.trustProxy ?? [],
    changeRetentionDays: options.changeRetentionDays ?? DEFAULT_CHANGE_RETENTION_DAYS,
    ...(options.webhooks && { webhooks: options.webhooks }),
  };
  const database = openDatabase(config.database);
  await migrateToLatest(database);
  const load = (dataSet: DataSetInput, importOptions: ImportOptions = {}) =>
    importDataSet(database, dataSet, {
      changeRetentionDays: config.changeRetentionDays,
      ...importOptions,
    });
  for (const dataSet of options.dataSets ?? []) await load(dataSet);

  const logs: Record<string, unknown>[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const app = await buildApp({
    config,
    database,
    serve: {
      deliverWebhooks: options.webhooks !== undefined,
      ...(options.auditWriterThread && { auditWriterThread: true }),
    },
    testing: {
      logStream,
      ...(options.now && { now: options.now }),
      ...(options.monotonic && { monotonic: options.monotonic }),
      ...(options.webhookSchedule && { webhookSchedule: options.webhookSchedule }),
      ...(options.timeouts && { timeouts: options.timeouts }),
      ...(options.auditBufferLimit !== undefined && { auditBufferLimit: options.auditBufferLimit }),
      passwordHashing: options.passwordHashing ?? TEST_PASSWORD_HASHING,
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const url = `http://127.0.0.1:${address.port}`;

  return {
    url,
    app,
    database,
    databaseConfig,
    databaseUrl:
      databaseConfig.dialect === 'sqlite' ? `sqlite:${databaseConfig.path}` : databaseConfig.url,
    logs,
    load,
    async createKey(org, name, restrictions) {
      const now = options.now?.() ?? Date.now();
      return (await createApiKey(database.db, { org, name, ...restrictions }, now)).key;
    },
    async request(path, requestOptions = {}) {
      const { key } = requestOptions;
      if (key === undefined) throw new Error('request() needs a key, or key: null to send none');
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (key !== null) headers['x-api-key'] = key;
      const method = requestOptions.method ?? 'GET';
      const response = await fetch(`${url}${path}`, { method, headers });
      // Every response the suite receives must be one openapi.json declares.
      const { status } = response;
      const body = await response.clone().text();
      assertConformsToContract({ method, target: path, status, headers: response.headers, body });
      return response;
    },
    async close() {
      await app.close();
      await testDatabase.drop();
    },
  };
}
