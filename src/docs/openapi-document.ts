// The OpenAPI document exactly as the app serves it at /openapi.json, built from an app
// over an empty in-memory database (the document depends on the routes, not the data).
// `npm run docs:export` writes it to openapi.json; a test compares the two.
import { buildApp } from '../app.js';
import { type Config, DEFAULT_CHANGE_RETENTION_DAYS } from '../config.js';
import { openDatabase } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { OPENAPI_PATH } from '../plugins/openapi.js';

const CONFIG: Config = {
  port: 0,
  host: '127.0.0.1',
  database: { dialect: 'sqlite', path: ':memory:' },
  redisUrl: undefined,
  rateLimitPerSecond: 10,
  logLevel: 'silent',
  metricsPort: undefined,
  trustProxy: [],
  changeRetentionDays: DEFAULT_CHANGE_RETENTION_DAYS,
};

/** The document as the text of the committed openapi.json: 2-space JSON and a newline. */
export async function renderOpenApiDocument(): Promise<string> {
  const database = openDatabase(CONFIG.database);
  await migrateToLatest(database);
  const app = await buildApp({ config: CONFIG, database });
  try {
    const response = await app.inject({ method: 'GET', url: OPENAPI_PATH });
    if (response.statusCode !== 200) {
      throw new Error(`${OPENAPI_PATH} answered ${response.statusCode}: ${response.body}`);
    }
    return `${JSON.stringify(response.json(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
