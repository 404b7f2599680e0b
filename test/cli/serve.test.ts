// compplan serve [--port N] [--host H] [--demo] (README.md), as a real process.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCli,
  startCliServer,
  stopAllProcesses,
  type TempDatabase,
  tempDatabase,
} from '../helpers/cli.js';
import { compplanNodeFlags } from '../helpers/services/compplan.js';

const LOOPBACK_URL = /^http:\/\/127\.0\.0\.1:(\d+)$/;
const DEMO_START =
  /^compplan is listening on (\S+)\n\nLoaded the demo data set \(organisation "demo"\) and generated a key for it\.\nIt is shown only this once:\n\n {2}(cpk_[0-9A-Za-z]{42})\n\nTry it:\n {2}curl -H "x-api-key: (\S+)" (\S+)\n\n$/;

/**
 * The addresses sockets listen on at `port`, from the kernel's tables (/proc/net/tcp and
 * tcp6: local address and port in hex, state 0A is LISTEN): "0.0.0.0" or "::" for every
 * interface.
 */
function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local = '', , state] = line.trim().split(/\s+/);
      const [address = '', hexPort = ''] = local.split(':');
      if (state !== '0A' || Number.parseInt(hexPort, 16) !== port) continue;
      if (address.length === 8) {
        // IPv4, its bytes in the host's (little-endian) order.
        addresses.push(
          (address.match(/../g) ?? [])
            .reverse()
            .map((byte) => Number.parseInt(byte, 16))
            .join('.'),
        );
      } else {
        addresses.push(/^0+$/.test(address) ? '::' : `ipv6:${address}`);
      }
    }
  }
  return addresses;
}

describe('compplan serve', () => {
  let db: TempDatabase;
  /** The key `serve --demo` printed on the first start. */
  let demoKey = '';

  beforeAll(() => {
    db = tempDatabase();
  });
  afterAll(async () => {
    await stopAllProcesses();
    db.remove();
  });

  it('serve --demo on a new database prints a key once and a curl line that works as printed; it listens where the flags say (over PORT/HOST) and exits 0 on SIGTERM', async () => {
    // PORT and HOST name what the flags --port 0 --host 127.0.0.1 override.
    const first = await startCliServer(['--demo'], {
      ...db.env,
      PORT: '1',
      HOST: '0.0.0.0',
      LOG_LEVEL: 'info',
    });
    try {
      expect(first.url).toMatch(LOOPBACK_URL);
      expect(Number(LOOPBACK_URL.exec(first.url)?.[1])).toBeGreaterThan(1);
      const match = DEMO_START.exec(first.stderr());
      expect(match, first.stderr()).not.toBeNull();
      const [, url, key = '', curlKey = '', curlUrl = ''] = match ?? [];
      demoKey = key;
      expect(url).toBe(first.url);
      expect(curlKey).toBe(key);
      expect(curlUrl.startsWith(`${first.url}/`)).toBe(true);

      // What the curl line does: GET the URL with the header.
      const response = await fetch(curlUrl, { headers: { 'x-api-key': curlKey } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: unknown[]; nextCursor: unknown };
      expect(Object.keys(body)).toEqual(['data', 'nextCursor']);
      expect(body.data.length).toBeGreaterThan(0);

      const pong = await fetch(`${first.url}/ping`, { headers: { 'x-api-key': key } });
      expect(pong.status).toBe(200);
      expect(await pong.json()).toEqual({ message: 'pong' });
      expect((await fetch(`${first.url}/ping`)).status).toBe(401);

      // Structured JSON logs on standard output, never with the key.
      const logLines = first
        .stdout()
        .split('\n')
        .filter((line) => line.trim() !== '');
      expect(logLines.length).toBeGreaterThan(0);
      for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
      expect(first.stdout()).not.toContain(key);

      // Started as npm start starts it, node runs with compplan's V8 flags.
      const commandLine = readFileSync(`/proc/${first.process.pid}/cmdline`, 'utf8').split('\0');
      const flags = compplanNodeFlags();
      expect(commandLine.slice(1, 1 + flags.length)).toEqual(flags);
    } finally {
      expect(await first.stop()).toEqual({ code: 0, signal: null, killed: false });
    }
    await expect(fetch(`${first.url}/ping`)).rejects.toThrow();
  });

  it('without --host or HOST (as npm start runs it) it listens on 127.0.0.1 only, and prints that address', async () => {
    const own = tempDatabase();
    const server = await startCliServer([], { ...own.env, LOG_LEVEL: 'warn' }, { hostFlag: false });
    try {
      expect(server.url).toMatch(LOOPBACK_URL);
      const port = Number(LOOPBACK_URL.exec(server.url)?.[1]);
      expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
      own.remove();
    }
  });

  it('serve --demo on a database that has the demo prints no key, the first key still works, and a second server on its port exits 1 with a one-line message', async () => {
    expect(demoKey).toMatch(/^cpk_/);
    const second = await startCliServer(['--demo'], { ...db.env, LOG_LEVEL: 'warn' });
    try {
      expect(second.stderr()).toBe(
        `compplan is listening on ${second.url}\nThe demo data set is loaded. Make a key with: npx compplan keys create --org demo\n\n`,
      );
      const again = await fetch(`${second.url}/ping`, { headers: { 'x-api-key': demoKey } });
      expect(again.status).toBe(200);

      const port = LOOPBACK_URL.exec(second.url)?.[1] ?? '';
      const result = await runCli(['serve', '--host', '127.0.0.1', '--port', port], {
        env: { ...db.env, LOG_LEVEL: 'silent' },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^compplan: the port is already in use: [^\n]*\n$/);
    } finally {
      expect(await second.stop()).toEqual({ code: 0, signal: null, killed: false });
    }
  });
});
