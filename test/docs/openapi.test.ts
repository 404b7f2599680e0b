// The committed openapi.json is the document the app serves, and the SDK's types are the
// ones openapi-typescript makes from it: `npm run docs:export` refreshes both, and these
// tests fail until it has been run after a change to the routes or schemas.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderOpenApiDocument } from '../../src/docs/openapi-document.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const committed = () => readFileSync(`${ROOT}openapi.json`, 'utf8');

describe('the OpenAPI document', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('is committed exactly as the app builds it (run npm run docs:export after a change)', async () => {
    expect(await renderOpenApiDocument()).toBe(committed());
  });

  it('is served at /openapi.json without a key, as JSON', async () => {
    const response = await fetch(`${server.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual(JSON.parse(committed()));
  });

  it('has one schema per component id however many apps a process builds (the suite builds many)', async () => {
    // zod's global registry maps each id to one schema (its `_idmap`, read here as the
    // registry has no public lookup by id). A schema made per app would put a second one
    // under its id, and converting both ("Duplicate schema id") breaks /openapi.json.
    const byId = () =>
      new Map((z.globalRegistry as unknown as { _idmap: Map<string, unknown> })._idmap);
    const before = byId();
    const another = await startTestServer();
    await another.close();
    const after = byId();
    expect(before.size).toBeGreaterThan(10);
    for (const [id, schema] of after)
      expect({ id, same: schema === before.get(id) }).toEqual({ id, same: true });
  });

  it("has compplan's one version, package.json's, as the command line and the client package have", async () => {
    const versionOf = (path: string) =>
      (JSON.parse(readFileSync(`${ROOT}${path}`, 'utf8')) as { version: string }).version;
    const { version } = JSON.parse(await renderOpenApiDocument()).info as { version: string };
    expect(version).toBe(versionOf('package.json'));
    expect(versionOf('packages/client/package.json')).toBe(version);
  });

  it('is OpenAPI 3.1 with the x-api-key and Basic schemes, either one, on every API operation and none on the health checks', () => {
    const document = JSON.parse(committed());
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
      BasicWithApiKey: expect.objectContaining({ type: 'http', scheme: 'basic' }),
    });
    expect(document.security).toEqual([{ ApiKey: [] }, { BasicWithApiKey: [] }]);
    const security = Object.fromEntries(
      Object.entries(document.paths).map(([path, item]) => [
        path,
        (item as { get: { security?: unknown } }).get.security ?? 'global',
      ]),
    );
    expect(security).toEqual({
      '/healthz': [],
      '/readyz': [],
      '/ping': 'global',
      '/v1/compensationPlanning/meritCycles': 'global',
      '/v1/compensationPlanning/meritCycles/{id}': 'global',
      '/v1/compensationPlanning/meritCycles/{id}/exchangeRates': 'global',
      '/v1/compensationPlanning/meritCycles/{id}/columns': 'global',
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees': 'global',
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees/bulk': 'global',
      '/v1/compensationPlanning/meritCycles/delta': 'global',
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees/delta': 'global',
    });
  });

  it('declares the responses each operation can give', () => {
    const document = JSON.parse(committed());
    const statuses = Object.fromEntries(
      Object.entries(document.paths).map(([path, item]) => [
        path,
        Object.keys((item as { get: { responses: object } }).get.responses),
      ]),
    );
    // The HTTP layer's answers, on every path.
    const http = ['400', '405', '408', '414', '431', '500'];
    // 403: a key used from outside its address allowlist.
    const api = [...http, '304', '401', '403', '422', '429', '503', '504'].sort();
    const cycle = [...api, '404'].sort();
    // Deltas: 410 for a token older than the retention of removals.
    const delta = [...api, '410'].sort();
    expect(statuses).toEqual({
      '/healthz': ['200', ...http],
      '/readyz': ['200', ...http, '503'],
      '/ping': ['200', ...api],
      '/v1/compensationPlanning/meritCycles': ['200', ...api],
      '/v1/compensationPlanning/meritCycles/{id}': ['200', ...cycle],
      '/v1/compensationPlanning/meritCycles/{id}/exchangeRates': ['200', ...cycle],
      '/v1/compensationPlanning/meritCycles/{id}/columns': ['200', ...cycle],
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees': ['200', ...cycle],
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees/bulk': ['200', ...cycle],
      '/v1/compensationPlanning/meritCycles/delta': ['200', ...delta],
      '/v1/compensationPlanning/meritCycles/{meritCycleId}/employees/delta': [
        '200',
        ...[...delta, '404'].sort(),
      ],
    });
  });

  it('gives the SDK the types openapi-typescript makes from it (npm run docs:export regenerates them)', async () => {
    const cli = `${ROOT}packages/client/node_modules/openapi-typescript/bin/cli.js`;
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'openapi.json'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(stdout).toBe(readFileSync(`${ROOT}packages/client/src/generated/openapi.ts`, 'utf8'));
  }, 60_000);
});
