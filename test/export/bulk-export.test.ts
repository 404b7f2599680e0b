// `compplan export employees` through the bulk download (docs/export.md): the real CLI
// against a real server. Its output is byte for byte the output of paging through the
// list, in every format; a server without the bulk download (a stand-in for an older
// version: a proxy that answers its path 404) is paged through instead; --resume of an
// interrupted download makes it again.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employeeIdsInOrder, SDK_CYCLE, SDK_ORG, sdkDataSet } from '../client/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { csvRecords } from './csv-parse.js';

const EMPLOYEES = 250;

/** Forwards every request to `target`, except the bulk download's path: 404 as an older server. */
async function withoutBulk(
  target: string,
): Promise<{ url: string; paths: string[]; server: Server }> {
  const paths: string[] = [];
  const server = createServer((incoming, outgoing) => {
    paths.push(incoming.url ?? '');
    if ((incoming.url ?? '').includes('/employees/bulk')) {
      outgoing.writeHead(404, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify({ message: 'Route not found', statusCode: 404 }));
      return;
    }
    const forwarded = httpRequest(
      `${target}${incoming.url}`,
      { headers: incoming.headers, method: incoming.method },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, paths, server };
}

describe('compplan export employees in one download', () => {
  let server: TestServer;
  let key: string;
  let dir: string;
  const cli = (args: string[], baseUrl = server.url) =>
    runCli(['export', 'employees', '--cycle', SDK_CYCLE.big, ...args, '--base-url', baseUrl], {
      env: { COMPPLAN_API_KEY: key, COMPPLAN_BASE_URL: undefined },
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [sdkDataSet(EMPLOYEES)] });
    key = await server.createKey(SDK_ORG);
    dir = mkdtempSync(join(tmpdir(), 'compplan-bulk-export-'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Bulk downloads the server answered, by its access log. */
  const bulkRequests = () =>
    server.logs.filter((line) =>
      String((line.req as { url?: string } | undefined)?.url ?? '').includes('/employees/bulk'),
    ).length;

  for (const format of ['csv', 'ndjson', 'json'] as const) {
    it(`writes ${format} byte for byte as paging through the list does, in one request`, async () => {
      const before = bulkRequests();
      const downloaded = await cli(['--format', format, '-o', join(dir, `one.${format}`)]);
      expect(downloaded).toMatchObject({ code: 0, stderr: '' });
      const paged = await cli([
        '--format',
        format,
        '--no-bulk',
        '-o',
        join(dir, `paged.${format}`),
      ]);
      expect(paged).toMatchObject({ code: 0, stderr: '' });
      const one = readFileSync(join(dir, `one.${format}`));
      expect(one.equals(readFileSync(join(dir, `paged.${format}`)))).toBe(true);
      expect(one.length).toBeGreaterThan(EMPLOYEES * 50);
      expect(bulkRequests()).toBe(before + 1);
    });
  }

  it('writes standard output in one download too', async () => {
    const result = await cli(['--format', 'ndjson']);
    expect(result.code).toBe(0);
    const ids = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toEqual(employeeIdsInOrder(EMPLOYEES));
  });

  it('pages through the list when the server has no bulk download (404)', async () => {
    const old = await withoutBulk(server.url);
    try {
      const file = join(dir, 'older.csv');
      const result = await cli(['-o', file], old.url);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(csvRecords(readFileSync(file, 'utf8').slice(1)).map((r) => r.id)).toEqual(
        employeeIdsInOrder(EMPLOYEES),
      );
      expect(old.paths.filter((path) => path.includes('/employees/bulk'))).toHaveLength(1);
      expect(old.paths.filter((path) => path.includes('/employees?'))).toHaveLength(3);
    } finally {
      old.server.close();
    }
  });

  it('makes an interrupted download again with --resume, from the start', async () => {
    const file = join(dir, 'resumed.csv');
    // What a download cut off after its first piece leaves behind.
    writeFileSync(file, '\uFEFFid,email\r\nmce_half-written,row');
    writeFileSync(
      `${file}.export-state.json`,
      JSON.stringify({
        version: 1,
        request: {
          kind: 'employees',
          format: 'csv',
          cycle: SDK_CYCLE.big,
          pageSize: 100,
          bom: true,
        },
        bytes: 20,
        rows: 1,
        pages: 1,
        bulk: true,
      }),
    );
    const result = await cli(['-o', file, '--resume']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(file).equals(readFileSync(join(dir, 'one.csv')))).toBe(true);
  });
});
