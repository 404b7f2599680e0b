// `npm ci` on Node 20 prints no EBADENGINE warning: every package the lock file installs
// admits the Node versions compplan supports (package.json engines, >=20.19). Two
// dependencies of dependencies had moved to releases that declare Node 22 only
// (content-disposition 3 under @fastify/static, cookie 2 under light-my-request); the
// overrides in package.json pin the previous releases, which declare Node 18 and offer the
// same functions, and the tests below use them through their dependants.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

interface LockFile {
  packages: Record<string, { version?: string; engines?: { node?: unknown } }>;
}
const readJson = <T>(file: string) => JSON.parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as T;

describe('Node 20 and the installed packages', () => {
  it('every package of package-lock.json admits the oldest Node compplan supports and the Node running this test', () => {
    const supported = readJson<{ engines: { node: string } }>('package.json').engines.node;
    expect(supported).toBe('>=20.19');
    const oldest = semver.minVersion(supported)?.version ?? '';
    expect(oldest).toBe('20.19.0');
    const refusing = Object.entries(readJson<LockFile>('package-lock.json').packages)
      .filter(([, entry]) => typeof entry.engines?.node === 'string')
      .filter(
        ([, entry]) =>
          ![oldest, process.versions.node].every((version) =>
            semver.satisfies(version, entry.engines?.node as string),
          ),
      )
      .map(([path, entry]) => `${path}@${entry.version}: node ${entry.engines?.node}`);
    expect(refusing).toEqual([]);
  });

  it('pins content-disposition and cookie to releases that declare Node 18+', () => {
    const { overrides } = readJson<{ overrides: Record<string, unknown> }>('package.json');
    expect(overrides).toMatchObject({ 'content-disposition': '2.0.1', cookie: '1.1.1' });
    const where = {
      'content-disposition': 'node_modules/@fastify/static/node_modules/content-disposition',
      cookie: 'node_modules/light-my-request/node_modules/cookie',
    };
    for (const [name, folder] of Object.entries(where)) {
      const installed = readJson<{ version: string; engines: { node: string } }>(
        `${folder}/package.json`,
      );
      expect({ name, version: installed.version, engines: installed.engines }).toEqual({
        name,
        version: overrides[name],
        engines: { node: '>=18' },
      });
    }
  });

  it('@fastify/static names a download with content-disposition 2; light-my-request sends cookies with cookie 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compplan-static-'));
    writeFileSync(join(dir, 'report.csv'), 'a,b\r\n');
    const app = Fastify();
    await app.register(fastifyStatic, { root: dir, serve: false });
    app.get('/download', (_request, reply) => reply.download('report.csv', 'Q1 résumé.csv'));
    app.get('/cookies', (request) => ({ cookie: request.headers.cookie }));
    try {
      const download = await app.inject({ url: '/download' });
      expect(download.statusCode).toBe(200);
      expect(download.headers['content-disposition']).toBe(
        // The plain filename is the ISO-8859-1 fallback; filename* carries the name whole.
        `attachment; filename="Q1 r?sum?.csv"; filename*=UTF-8''Q1%20r%C3%A9sum%C3%A9.csv`,
      );
      expect(download.body).toBe('a,b\r\n');
      const cookies = await app.inject({ url: '/cookies', cookies: { session: 'a b;c' } });
      expect(cookies.json()).toEqual({ cookie: 'session=a%20b%3Bc' });
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
