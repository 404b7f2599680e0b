// Requests to the OData feed over real HTTP, with the key as x-api-key or Basic password.
import { afterAll, beforeAll } from 'vitest';
import type { DataSetInput } from '../../src/import/schema.js';
import type { Employee } from '../../src/modules/employees/schema.js';
import { startTestServer, type TestServer } from './server.js';

export const FEED = '/odata/v4';

export interface FeedResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: feed bodies are checked field by field.
  json: any;
}

export async function feed(
  server: TestServer,
  path: string,
  options: { key?: string | null; basic?: string; headers?: Record<string, string> } = {},
): Promise<FeedResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  if (options.basic) {
    headers.authorization = `Basic ${Buffer.from(`analyst:${options.basic}`).toString('base64')}`;
  }
  const response = await fetch(`${server.url}${FEED}${path}`, { headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Every entity of a collection, following @odata.nextLink; the pages' sizes too. */
export async function walk(
  server: TestServer,
  path: string,
  key: string,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: entities are checked field by field.
): Promise<{ entities: any[]; pages: number[] }> {
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  const entities: any[] = [];
  const pages: number[] = [];
  let url: string | undefined = `${server.url}${FEED}${path}`;
  while (url) {
    const response = await fetch(url, { headers: { 'x-api-key': key, ...headers } });
    if (response.status !== 200)
      throw new Error(`${url}: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { value: unknown[]; '@odata.nextLink'?: string };
    entities.push(...body.value);
    pages.push(body.value.length);
    url = body['@odata.nextLink'];
  }
  return { entities, pages };
}

/**
 * A test server with these data sets and a key of `org`, started before the enclosing
 * describe's tests and closed after them; `get` sends a feed request with the key.
 */
export function feedTestServer(dataSets: () => DataSetInput[], org: string) {
  const state: { server?: TestServer; key?: string } = {};
  beforeAll(async () => {
    state.server = await startTestServer({ dataSets: dataSets() });
    state.key = await state.server.createKey(org);
  });
  afterAll(() => state.server?.close());
  return {
    get server(): TestServer {
      return state.server as TestServer;
    },
    get key(): string {
      return state.key as string;
    },
    get: (path: string, headers?: Record<string, string>) =>
      feed(state.server as TestServer, path, { key: state.key, ...(headers && { headers }) }),
  };
}

/** An employee as REST serves it, as the feed's Employee entity has its own fields. */
export const feedEmployeeFields = (employee: Employee, meritCycleId: string) => ({
  id: employee.id,
  meritCycleId,
  email: employee.email,
  firstName: employee.firstName,
  lastName: employee.lastName,
  preferredName: employee.preferredName,
  currencyCode: employee.currencyCode.code,
  currencyName: employee.currencyCode.value,
  eligibilityStatus: employee.eligibilityStatus,
});
