// The Lua scripts `npm run bench` and `npm run soak` drive wrk with (bench/wrk/), against a
// node:http server that records what it is sent: the key on every request, the walk's
// paths in turn, and wrk's counts read back as bench/wrk.ts reports them. The project
// `bench` runs it where wrk is installed (Debian's package; .ci/run installs it).
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWrk } from '../../bench/wrk.js';

const work = mkdtempSync(join(tmpdir(), 'compplan-bench-wrk-'));
const seen: { path: string; key: string | undefined }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ path: request.url ?? '', key: request.headers['x-api-key'] as string });
    const status = request.url === '/limited' ? 429 : 200;
    response.writeHead(status, { 'content-type': 'text/plain' }).end('answer');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the benchmark's wrk scripts", () => {
  it('key.lua sends the key with every request to its URL; every answer 2xx', async () => {
    seen.length = 0;
    const result = await runWrk({
      url: `${base}/ping`,
      script: 'key.lua',
      scriptArgs: [],
      apiKey: 'key_one',
      seconds: 1,
      connections: 2,
    });
    expect(result.requests).toBeGreaterThan(0);
    // The requests wrk counts are those answered before it stopped: at most one a
    // connection fewer than the server answered.
    expect(seen.length - result.requests).toBeGreaterThanOrEqual(0);
    expect(seen.length - result.requests).toBeLessThanOrEqual(2);
    expect(new Set(seen.map((request) => `${request.path} ${request.key}`))).toEqual(
      new Set(['/ping key_one']),
    );
    expect(result.non2xx).toBe(0);
    expect(result.socketErrors).toBe(0);
    expect(result.p99Ms).toBeGreaterThan(0);
    expect(result.p99Ms).toBeLessThanOrEqual(result.maxMs);
    expect(result.rps).toBeCloseTo(result.requests / result.seconds, 6);
  });

  it('walk.lua requests the paths of its file in turn, over and over, and wrk counts the 429s', async () => {
    seen.length = 0;
    const paths = join(work, 'paths.txt');
    writeFileSync(paths, '/a?limit=100\n/b?limit=100&nextCursor=x%2By\n/limited\n');
    const result = await runWrk({
      url: base,
      script: 'walk.lua',
      scriptArgs: [paths],
      apiKey: 'key_two',
      seconds: 1,
      connections: 1,
    });
    const expected = ['/a?limit=100', '/b?limit=100&nextCursor=x%2By', '/limited'];
    expect(seen.length).toBeGreaterThan(3);
    // In turn from wherever wrk began (it may call request() once before the first send).
    const start = expected.indexOf(seen[0]?.path ?? '');
    expect(start).toBeGreaterThanOrEqual(0);
    seen.forEach((request, index) => {
      expect(request).toEqual({ path: expected[(start + index) % 3], key: 'key_two' });
    });
    const limited = seen.filter((request) => request.path === '/limited').length;
    // One connection: the request in flight when wrk stopped is the only one it missed.
    expect(limited - result.non2xx).toBeGreaterThanOrEqual(0);
    expect(limited - result.non2xx).toBeLessThanOrEqual(1);
    expect(result.non2xx).toBeGreaterThan(0);
  });

  it('random.lua draws keys and paths from its files and counts the answers by status', async () => {
    seen.length = 0;
    const keys = join(work, 'keys.txt');
    const paths = join(work, 'random-paths.txt');
    writeFileSync(keys, 'key_a\nkey_b\n');
    writeFileSync(paths, '/a\n/limited\n');
    const result = await runWrk({
      url: base,
      script: 'random.lua',
      scriptArgs: [keys, paths],
      seconds: 1,
      connections: 1,
    });
    expect(new Set(seen.map((request) => `${request.path} ${request.key}`))).toEqual(
      new Set(['/a key_a', '/a key_b', '/limited key_a', '/limited key_b']),
    );
    expect(Object.keys(result.statuses).sort()).toEqual(['200', '429']);
    expect((result.statuses['200'] ?? 0) + (result.statuses['429'] ?? 0)).toBe(result.requests);
    expect(result.statuses['429']).toBe(result.non2xx);
  });
});
