// SQLite's files readable by their owner only (docs/operations.md, "Files"): a database
// compplan creates is 0600, with its -wal and -shm files, in folders it creates 0700,
// whatever the umask; the files of an existing database others could read are made 0600,
// with a line saying so. Through spawned `compplan migrate` and `compplan serve` (the
// umask is this test process's, which its children inherit).
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli, startCliServer, stopAllProcesses } from '../helpers/cli.js';

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

describe('SQLite files for their owner only', () => {
  const folders: string[] = [];
  const umask = process.umask();
  const temp = () => {
    const folder = mkdtempSync(join(tmpdir(), 'compplan-modes-'));
    folders.push(folder);
    return folder;
  };
  afterEach(() => {
    process.umask(umask);
  });
  afterAll(async () => {
    process.umask(umask);
    await stopAllProcesses();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  for (const mask of [0o022, 0o000]) {
    const shown = mask.toString(8).padStart(4, '0');
    it(`umask ${shown}: migrate makes the folders 0700 and the database 0600; serve's -wal and -shm are 0600`, async () => {
      process.umask(mask);
      const root = temp();
      const path = join(root, 'made', 'by', 'compplan', 'compplan.db');
      const env = { DATABASE_URL: `sqlite:${path}` };
      const migrated = await runCli(['migrate'], { env });
      expect([migrated.code, migrated.stderr]).toEqual([0, '']);
      expect(
        ['made', 'made/by', 'made/by/compplan'].map((folder) => modeOf(join(root, folder))),
      ).toEqual(['0700', '0700', '0700']);
      expect(modeOf(path)).toBe('0600');

      const server = await startCliServer([], { ...env, LOG_LEVEL: 'warn' });
      try {
        expect(existsSync(`${path}-wal`) && existsSync(`${path}-shm`)).toBe(true);
        expect([path, `${path}-wal`, `${path}-shm`].map(modeOf)).toEqual(['0600', '0600', '0600']);
      } finally {
        expect((await server.stop()).code).toBe(0);
      }
    });
  }

  it("umask 0000: `npm start`'s default, ./data/compplan.db, is made 0600 in a ./data made 0700", async () => {
    process.umask(0o000);
    const cwd = temp();
    // compplan serve --demo as `npm start` runs it, from a folder of its own, with no
    // DATABASE_URL: the default.
    const server = await startCliServer(['--demo'], { LOG_LEVEL: 'warn' }, { cwd });
    try {
      const path = join(cwd, 'data', 'compplan.db');
      expect([join(cwd, 'data'), path, `${path}-wal`, `${path}-shm`].map(modeOf)).toEqual([
        '0700',
        '0600',
        '0600',
        '0600',
      ]);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  });

  it('an existing database others could read: migrate makes its files 0600 and says so; a folder it did not make is left as it is', async () => {
    process.umask(0o022);
    const root = temp();
    const path = join(root, 'old.db');
    expect((await runCli(['migrate'], { env: { DATABASE_URL: `sqlite:${path}` } })).code).toBe(0);
    chmodSync(path, 0o644);
    writeFileSync(`${path}-wal`, '');
    chmodSync(`${path}-wal`, 0o640);
    chmodSync(root, 0o755);
    const migrated = await runCli(['migrate'], { env: { DATABASE_URL: `sqlite:${path}` } });
    expect(migrated.code).toBe(0);
    expect(migrated.stderr).toBe(
      [
        `compplan: ${path} was readable by other users (mode 0644): made readable by its owner only (docs/operations.md, "Files")`,
        `compplan: ${path}-wal was readable by other users (mode 0640): made readable by its owner only (docs/operations.md, "Files")`,
        '',
      ].join('\n'),
    );
    expect(modeOf(path)).toBe('0600');
    expect(modeOf(root)).toBe('0755');
  });
});
