// Address allowlists (docs/api-keys.md): a key bound to addresses answers 403 with the
// standard error body from any other client address, recorded in the audit log, and
// takes none of the key's quota; its answers and cursors are never shared with a key
// that may be used from elsewhere. Requests leave from two loopback addresses, 127.0.0.1
// and 127.0.0.2, to a server listening on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressInRanges, allowedRanges } from '../../src/address-ranges.js';
import { findActiveKeyByHash } from '../../src/api-keys/repository.js';
import { hashSecret } from '../../src/api-keys/secret.js';
import { ACME, acmeDataSet, CYCLE } from '../fixtures/data-sets.js';
import { assertConformsToContract } from '../helpers/openapi-contract.js';
import { nodeRequest } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { auditEntriesOf, requestsOf } from './helpers.js';

const EMPLOYEES = `/v1/compensationPlanning/meritCycles/${CYCLE.annual2025}/employees`;
const REFUSED = 'This API key may not be used from this address';

describe('address allowlists', () => {
  let server: TestServer;
  let bound: string;
  let open: string;

  /** A GET with `key` from `from`, checked against openapi.json like every answer. */
  async function from(localAddress: string, key: string, path = EMPLOYEES) {
    const response = await nodeRequest(server.url, path, {
      headers: { 'x-api-key': key },
      localAddress,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    assertConformsToContract({
      method: 'GET',
      target: path,
      status: response.status,
      headers,
      body: response.body,
    });
    return response;
  }

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [acmeDataSet()], rateLimitPerSecond: 3 });
    bound = await server.createKey(ACME, 'bound', { allowedAddresses: ['127.0.0.2/32', '::1'] });
    open = await server.createKey(ACME, 'open');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers a bound key from its address, and 403 with the standard error body from any other', async () => {
    const allowed = await from('127.0.0.2', bound);
    expect(allowed.status).toBe(200);
    const refused = await from('127.0.0.1', bound);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      statusCode: 403,
      message: REFUSED,
      path: EMPLOYEES,
      timestamp: expect.any(String),
    });
    // An unknown path with the key from elsewhere: the same 403, not a 404.
    expect((await from('127.0.0.1', bound, '/no-such-path')).status).toBe(403);
    // A key without an allowlist works from both.
    expect((await from('127.0.0.1', open)).status).toBe(200);
    expect((await from('127.0.0.2', open)).status).toBe(200);
  });

  it('records the 403s in the audit log with the address they came from', async () => {
    await server.app.audit.flush();
    const entries = requestsOf(await auditEntriesOf(server.database.db, ACME)).slice(0, 3);
    expect(entries.map((entry) => [entry.status, entry.clientAddress, entry.employees])).toEqual([
      [200, '127.0.0.2', expect.any(Number)],
      [403, '127.0.0.1', 0],
      [403, '127.0.0.1', 0],
    ]);
  });

  it('takes none of the key’s quota from a refused address', async () => {
    // Three a second: ten refused requests leave the key its three.
    for (let n = 0; n < 10; n++) expect((await from('127.0.0.1', bound)).status).toBe(403);
    const answered = await from('127.0.0.2', bound, '/ping');
    expect(answered.status).toBe(200);
  });

  it('makes the allowlist part of the key’s scope: a bound key shares no kept answer or cursor with an open one', async () => {
    const scopeOf = async (secret: string) =>
      findActiveKeyByHash(server.database.db, hashSecret(secret));
    const [boundScope, openScope] = [await scopeOf(bound), await scopeOf(open)];
    expect(openScope?.fingerprint).toBe(openScope?.organizationId);
    expect(boundScope?.fingerprint).not.toBe(openScope?.fingerprint);
    expect(boundScope?.allowedAddresses).toEqual(['127.0.0.2/32', '::1']);
    // A cursor of the open key is foreign to the bound key.
    const page = JSON.parse((await from('127.0.0.1', open, `${EMPLOYEES}?limit=1`)).body) as {
      nextCursor: string;
    };
    const next = `${EMPLOYEES}?limit=1&nextCursor=${encodeURIComponent(page.nextCursor)}`;
    expect((await from('127.0.0.2', bound, next)).status).toBe(400);
  });

  it('matches IPv4 and IPv6 ranges, an IPv4-mapped IPv6 address as its IPv4 address', () => {
    const ranges = allowedRanges(['203.0.113.0/24', '2001:db8::/32']);
    expect(addressInRanges('203.0.113.77', ranges)).toBe(true);
    expect(addressInRanges('::ffff:203.0.113.77', ranges)).toBe(true);
    expect(addressInRanges('203.0.114.1', ranges)).toBe(false);
    expect(addressInRanges('2001:db8:1::5', ranges)).toBe(true);
    expect(addressInRanges('2001:db9::5', ranges)).toBe(false);
    expect(addressInRanges('not an address', ranges)).toBe(false);
  });
});
