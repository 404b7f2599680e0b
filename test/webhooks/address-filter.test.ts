// SSRF protection (docs/webhooks.md, "Safety"). The filter is given the refused ranges'
// addresses directly — nothing is ever sent to them — and real loopback receivers show
// that a delivery-time check refuses 127.0.0.1, [::1] and localhost, and that a redirect
// to loopback is never followed, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS opens the range.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  allowedRanges,
  checkEndpointUrl,
  RefusedAddressError,
  refusalOf,
  resolveTarget,
} from '../../src/webhooks/address-filter.js';
import { recordPing } from '../../src/webhooks/outbox.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { scaledSchedule, startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const REFUSED = {
  '10.0.0.1': 'private',
  '172.16.5.4': 'private',
  '192.168.1.1': 'private',
  '127.0.0.1': 'loopback',
  '169.254.169.254': 'link local',
  '100.64.0.1': 'carrier grade nat',
  '0.0.0.0': 'unspecified',
  '224.0.0.1': 'multicast',
  '255.255.255.255': 'broadcast',
  '192.0.2.1': 'reserved',
  '::1': 'loopback',
  '::': 'unspecified',
  'fd00::1': 'unique local',
  'fd00:ec2::254': 'unique local',
  'fe80::1': 'link local',
  '::ffff:10.0.0.1': 'private',
  '::ffff:169.254.169.254': 'link local',
  '64:ff9b::a00:1': 'rfc6052',
  '2002:a00:1::': '6to4',
  '2001:db8::1': 'reserved',
} as const;

describe('the address filter', () => {
  it.each(Object.entries(REFUSED))('refuses %s (%s) without the allowance', (address, range) => {
    expect(refusalOf(address, [])).toBe(
      `${address} is not a public address (${range}); allow its range with WEBHOOK_ALLOW_PRIVATE_NETWORKS`,
    );
  });

  it('lets public unicast addresses through, and an allowed range', () => {
    expect(refusalOf('93.184.215.14', [])).toBeUndefined();
    expect(refusalOf('2606:4700::1111', [])).toBeUndefined();
    const allowed = allowedRanges(['10.0.0.0/8', 'fd00::1']);
    expect(refusalOf('10.200.3.4', allowed)).toBeUndefined();
    expect(refusalOf('::ffff:10.0.0.1', allowed)).toBeUndefined();
    expect(refusalOf('fd00::1', allowed)).toBeUndefined();
    expect(refusalOf('fd00::2', allowed)).toMatch(/unique local/);
    expect(refusalOf('192.168.0.1', allowed)).toMatch(/private/);
  });

  it('checks an address written in a URL at delivery time without resolving anything', async () => {
    for (const address of Object.keys(REFUSED)) {
      const host = address.includes(':') ? `[${address}]` : address;
      await expect(resolveTarget(new URL(`https://${host}/hook`), [])).rejects.toThrow(
        RefusedAddressError,
      );
    }
    expect(await resolveTarget(new URL('https://[2606:4700::1111]/'), [])).toEqual([
      { address: '2606:4700::1111', family: 6 },
    ]);
  });

  it('refuses, when an endpoint is added, http://, credentials, refused addresses and localhost', () => {
    const refused = (url: string, allowance: string[] = []) => {
      try {
        checkEndpointUrl(url, allowance);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refused('http://example.com/hook')).toBe(
      'A webhook URL must start with https:// (http:// only to networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS), not http://',
    );
    expect(refused('http://example.com/hook', ['10.0.0.0/8'])).toBe('accepted');
    expect(refused('http://93.184.215.14/hook', ['10.0.0.0/8'])).toBe(
      'Refused webhook URL: http:// is only for networks named in WEBHOOK_ALLOW_PRIVATE_NETWORKS; use https://',
    );
    expect(refused('https://user:secret@example.com/')).toBe(
      'A webhook URL must not contain a user name or password',
    );
    expect(refused('https://localhost:8443/')).toMatch(/^Refused webhook URL: localhost/);
    expect(refused('https://api.localhost/')).toMatch(/^Refused webhook URL: localhost/);
    expect(refused('https://[fd00::1]/')).toMatch(/fd00::1 is not a public address/);
    expect(refused('https://example.com/hook')).toBe('accepted');
    expect(refused('not a url')).toBe('"not a url" is not a URL');
  });

  it('reads WEBHOOK_ALLOW_PRIVATE_NETWORKS like every variable: a bad entry names the variable', () => {
    expect(loadConfig({}).webhooks).toEqual({ allowPrivateNetworks: [] });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8, ::1' }).webhooks).toEqual({
      allowPrivateNetworks: ['127.0.0.0/8', '::1'],
    });
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: '10.0.0.0/33' })).toThrow(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS must be a comma-separated list of IP addresses or CIDR ranges, e.g. 10.20.0.0/16,127.0.0.0/8 (got "10.0.0.0/33")',
    );
  });
});

describe('the delivery-time check, with loopback receivers', () => {
  let server: TestServer | undefined;
  const receivers: WebhookReceiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await server?.close();
    server = undefined;
  });

  const ORG = 'filtered';
  async function serverAllowing(allowPrivateNetworks: string[]) {
    server = await startTestServer({
      webhooks: { allowPrivateNetworks },
      webhookSchedule: scaledSchedule(0.001),
      dataSets: [
        { organization: { slug: ORG, name: 'Filtered', apiKeysEnabled: false }, meritCycles: [] },
      ],
    });
    return server;
  }

  async function receiverOn(host: string) {
    const receiver = await startWebhookReceiver(host);
    receivers.push(receiver);
    return receiver;
  }

  /** Adds the endpoint as an operator with the allowance could, then pings it. */
  async function ping(target: TestServer, url: string, receiver?: WebhookReceiver) {
    const added = await addWebhookEndpoint(target.database.db, {
      org: ORG,
      url,
      allowPrivateNetworks: ['127.0.0.0/8', '::1/128'],
    });
    if (receiver) receiver.secret = added.secret;
    const { db } = target.database;
    const organization = await db
      .selectFrom('organizations')
      .select('id')
      .where('slug', '=', ORG)
      .executeTakeFirstOrThrow();
    await db.transaction().execute((trx) => recordPing(trx, organization.id, added.id));
    return added.id;
  }

  /** The endpoint's delivery once it has been attempted at least once. */
  async function firstAttempt(target: TestServer, endpointId: string) {
    const until = Date.now() + 15_000;
    for (;;) {
      const row = await target.database.db
        .selectFrom('webhook_deliveries')
        .select(['state', 'attempts', 'last_status', 'last_response'])
        .where('endpoint_id', '=', endpointId)
        .executeTakeFirstOrThrow();
      if (row.attempts > 0) return row;
      if (Date.now() > until) throw new Error('no attempt within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('refuses 127.0.0.1, [::1] and localhost receivers without the allowance: nothing reaches them', async () => {
    const target = await serverAllowing([]);
    const v4 = await receiverOn('127.0.0.1');
    const v6 = await receiverOn('::1');
    const cases = [
      [
        v4,
        v4.url,
        /^refused address: 127\.0\.0\.1: 127\.0\.0\.1 is not a public address \(loopback\)/,
      ],
      [v6, v6.url, /^refused address: ::1: ::1 is not a public address \(loopback\)/],
      [
        v4,
        v4.url.replace('127.0.0.1', 'localhost'),
        /^refused address: localhost: 127\.0\.0\.1 is not a public address \(loopback\)/,
      ],
    ] as const;
    for (const [, url, reason] of cases) {
      const id = await ping(target, url);
      const attempt = await firstAttempt(target, id);
      // Tried again on the (scaled) schedule, refused again each time.
      expect(attempt).toMatchObject({ state: 'pending', last_status: null });
      expect(attempt.last_response).toMatch(reason);
    }
    expect(v4.received).toEqual([]);
    expect(v6.received).toEqual([]);
  });

  it('delivers to the same receivers, verified, with the allowance', async () => {
    const target = await serverAllowing(['127.0.0.0/8', '::1/128']);
    const v4 = await receiverOn('127.0.0.1');
    const v6 = await receiverOn('::1');
    await ping(target, v4.url, v4);
    await ping(target, v6.url, v6);
    await v4.waitFor(1);
    await v6.waitFor(1);
    await ping(target, v4.url.replace('127.0.0.1', 'localhost'), v4);
    const received = [...(await v4.waitFor(2)), ...v6.received];
    expect(received.map((r) => [r.body.type, r.verified])).toEqual([
      ['ping', true],
      ['ping', true],
      ['ping', true],
    ]);
  });

  it('never follows a redirect: one to loopback is refused without the allowance, and not followed with it', async () => {
    const loopback = await receiverOn('::1');
    const redirecting = await receiverOn('127.0.0.1');
    redirecting.otherwise = { status: 307, headers: { location: loopback.url } };
    // Only the redirecting receiver's address is allowed: the redirect's target is not.
    const narrow = await serverAllowing(['127.0.0.1/32']);
    const first = await ping(narrow, redirecting.url, redirecting);
    expect(await firstAttempt(narrow, first)).toMatchObject({ state: 'pending', last_status: 307 });
    await narrow.close();
    const wide = await serverAllowing(['127.0.0.0/8', '::1/128']);
    const second = await ping(wide, redirecting.url, redirecting);
    expect(await firstAttempt(wide, second)).toMatchObject({ state: 'pending', last_status: 307 });
    expect(redirecting.received.length).toBeGreaterThanOrEqual(2);
    expect(redirecting.received.every((r) => r.verified)).toBe(true);
    expect(loopback.received).toEqual([]);
  });
});
