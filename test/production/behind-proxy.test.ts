// compplan behind nginx sees every request come from nginx's address. docs/api-behaviour.md limits
// failed authentications "per client address" (20 in 10 s), so the instance must take the
// client's address from the proxy it trusts (deploy/nginx.conf sends X-Forwarded-For and
// X-Real-IP), or one client's mistakes use up every client's allowance.
//
// The requests below carry exactly the headers nginx sends for two clients, 203.0.113.7
// and 198.51.100.9, and reach the instance from 127.0.0.1, as nginx's do. TRUST_PROXY is
// the setting this needs (the proxy addresses to believe X-Forwarded-For from); the
// configuration does not have it yet, so this test shows the defect until it does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { type CompplanInstance, compplan, startCompplan } from '../helpers/services/compplan.js';
import { type NginxServer, startNginx } from '../helpers/services/nginx.js';

const FAILURES_ALLOWED = 20; // per client address in 10 s (docs/api-behaviour.md, Rate limits)
const WRONG_KEY = 'cpk_not-a-real-key';

let dir: string | undefined;
let instance: CompplanInstance | undefined;
let nginx: NginxServer | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'compplan-proxy-'));
  env = { DATABASE_URL: `sqlite:${join(dir, 'compplan.db')}`, TRUST_PROXY: '127.0.0.1' };
  instance = await startCompplan(env);
  nginx = await startNginx([`127.0.0.1:${instance.port}`]);
});

afterAll(async () => {
  await nginx?.stop();
  await instance?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A request as nginx forwards it for a client at `client`. */
function fromClient(client: string) {
  return fetch(`${(instance as CompplanInstance).url}/ping`, {
    headers: { 'x-api-key': WRONG_KEY, 'x-forwarded-for': client, 'x-real-ip': client },
  });
}

describe('behind a trusted proxy', () => {
  it("failed authentications are counted per client address: one client's 20 failures leave another client its 401", async () => {
    for (let n = 0; n < FAILURES_ALLOWED; n++) {
      expect((await fromClient('203.0.113.7')).status).toBe(401);
    }
    expect((await fromClient('203.0.113.7')).status).toBe(429);
    // Another client behind the same proxy has made no mistakes yet.
    const other = await fromClient('198.51.100.9');
    expect(other.status).toBe(401);
  });
});

describe('an address allowlist behind nginx (deploy/nginx.conf)', () => {
  let bound: string;

  beforeAll(async () => {
    const file = join(dir ?? '', 'acme.json');
    writeFileSync(file, JSON.stringify(acmeDataSet()));
    await compplan(['import', file], env);
    const created = JSON.parse(
      await compplan(
        ['keys', 'create', '--org', ACME, '--allow-ips', '127.0.0.2/32', '--json'],
        env,
      ),
    ) as { key: string };
    bound = created.key;
  });

  /** A request through nginx from the client address `from`. */
  const through = (from: string, headers: Record<string, string> = {}) =>
    nodeRequest((nginx as NginxServer).url, '/ping', {
      headers: { 'x-api-key': bound, ...headers },
      localAddress: from,
    });

  it('takes the client address nginx forwards: the key answers its client and refuses another (403), one that claims the allowed address too', async () => {
    expect((await through('127.0.0.2')).status).toBe(200);
    const refused = await through('127.0.0.3');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({
      statusCode: 403,
      message: 'This API key may not be used from this address',
    });
    // nginx appends the address it saw; only what the trusted proxy says is believed.
    expect((await through('127.0.0.3', { 'x-forwarded-for': '127.0.0.2' })).status).toBe(403);
  });

  it('records the client addresses, not the proxy’s, in the audit log', async () => {
    // The instance writes its entries within a second; stopping it writes the rest.
    await (instance as CompplanInstance).stop();
    const entries = JSON.parse(await compplan(['audit', 'list', '--org', ACME, '--json'], env)) as {
      action: string;
      status: number;
      clientAddress: string;
    }[];
    const requests = entries.filter((entry) => entry.action === 'api.request').reverse();
    expect(requests.map((entry) => [entry.status, entry.clientAddress])).toEqual([
      [200, '127.0.0.2'],
      [403, '127.0.0.3'],
      [403, '127.0.0.3'],
    ]);
  });
});
