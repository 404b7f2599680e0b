// compplan behind nginx sees every request come from nginx's address. docs/api-behaviour.md limits
// failed authentications "per client address" (20 in 10 s), so the instance must take the
// client's address from the proxy it trusts (deploy/nginx.conf sends X-Forwarded-For and
// X-Real-IP), or one client's mistakes use up every client's allowance.
//
// The requests below carry exactly the headers nginx sends for two clients, 203.0.113.7
// and 198.51.100.9, and reach the instance from 127.0.0.1, as nginx's do. TRUST_PROXY is
// the setting this needs (the proxy addresses to believe X-Forwarded-For from); the
// configuration does not have it yet, so this test shows the defect until it does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompplanInstance, startCompplan } from '../helpers/services/compplan.js';

const FAILURES_ALLOWED = 20; // per client address in 10 s (docs/api-behaviour.md, Rate limits)
const WRONG_KEY = 'cpk_not-a-real-key';

let dir: string | undefined;
let instance: CompplanInstance | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'compplan-proxy-'));
  instance = await startCompplan({
    DATABASE_URL: `sqlite:${join(dir, 'compplan.db')}`,
    TRUST_PROXY: '127.0.0.1',
  });
});

afterAll(async () => {
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
