// Settings → Connections → Webhooks over real HTTP (both dialects): an administrator adds
// an endpoint and sees its signing secret once, sends a test ping that a real receiver
// verifies with that secret, sees the delivery listed, and removes the endpoint after a
// confirmation; refused URLs and other organisations' endpoints change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { listWebhookEndpoints } from '../../src/webhooks/repository.js';
import { addWebhookEndpoint } from '../../src/webhooks/service.js';
import { scaledSchedule, startTestServer, type TestServer } from '../helpers/server.js';
import { createUser } from '../helpers/set-up.js';
import { hiddenFieldsOf, textOf, WebClient, webDataSet } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const PAGE = '/app/settings/connections/webhooks';
const ALL_EVENTS = {
  'event-meritCycle.created': 'on',
  'event-meritCycle.updated': 'on',
  'event-meritCycle.removed': 'on',
  'event-meritCycle.employees.changed': 'on',
};

describe('Settings → Connections → Webhooks', () => {
  let server: TestServer;
  let admin: WebClient;
  let receiver: WebhookReceiver;

  const endpointsOf = async (slug: string) => {
    const organization = await findOrganizationBySlug(server.database.db, slug);
    return listWebhookEndpoints(server.database.db, organization?.id ?? '');
  };

  /** An endpoint added through the service, not the pages. */
  const endpointAdded = (org: string, url: string) =>
    addWebhookEndpoint(server.database.db, { org, url, allowPrivateNetworks: [] });

  async function postForm(path: string, action: string, form: Record<string, string>) {
    const page = await admin.get(path);
    return admin.post(action, { ...hiddenFieldsOf(page.body, action), ...form });
  }

  beforeAll(async () => {
    server = await startTestServer({
      webhooks: { allowPrivateNetworks: ['127.0.0.0/8'] },
      webhookSchedule: scaledSchedule(0.001),
      dataSets: [webDataSet('initech'), webDataSet('globex')],
    });
    const user = await createUser(server.database.db, {
      org: 'initech',
      email: 'admin@initech.example',
      role: 'admin',
    });
    admin = new WebClient(server.url);
    await admin.signInFirstTime(user.email, user.oneTimePassword, 'a long enough password');
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await server.close();
  });

  it('refuses a private address with the reason, and adds nothing', async () => {
    const refused = await postForm(PAGE, PAGE, {
      url: 'http://169.254.169.254/latest/meta-data',
      ...ALL_EVENTS,
    });
    expect(refused.status).toBe(422);
    // Said to the page's user, who cannot set the server's environment (the command line
    // names the variable: test/webhooks/cli.test.ts).
    expect(textOf(refused.body)).toContain(
      'Refused webhook URL: 169.254.169.254 is not a public address (link local); ask whoever runs this compplan server to allow private addresses for webhooks',
    );
    expect(refused.body).not.toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS');
    expect(refused.body).toContain('value="http://169.254.169.254/latest/meta-data"');
    expect(await endpointsOf('initech')).toEqual([]);
  });

  it('refuses http:// to a public address and a private range not allowed, in the words of the page’s user, never naming the server’s environment', async () => {
    const answers = {
      'http://93.184.216.34/hooks':
        'Refused webhook URL: http:// is only for private networks that whoever runs this compplan server has allowed; use https://',
      'https://[fd00::1]/hooks':
        'Refused webhook URL: fd00::1 is not a public address (unique local); ask whoever runs this compplan server to allow private addresses for webhooks',
    };
    for (const [url, message] of Object.entries(answers)) {
      const refused = await postForm(PAGE, PAGE, { url, ...ALL_EVENTS });
      expect(refused.status).toBe(422);
      expect(textOf(refused.body)).toContain(message);
      expect(refused.body).not.toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS');
    }
    expect(await endpointsOf('initech')).toEqual([]);
  });

  it('adds an endpoint and shows its signing secret once; a test ping reaches the receiver, verified with it, and is listed', async () => {
    const posted = await postForm(PAGE, PAGE, {
      url: receiver.url,
      'event-meritCycle.employees.changed': 'on',
    });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(PAGE);
    expect(posted.body).not.toContain('whsec_');
    const shown = await admin.get(PAGE);
    const secret = /id="new-webhook-secret" class="secret" type="text" value="(whsec_[^"]+)"/.exec(
      shown.body,
    )?.[1];
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(textOf(shown.body)).toContain('Copy this secret now. It cannot be shown again');
    const again = await admin.get(PAGE);
    expect(again.body).not.toContain(secret);
    const [endpoint] = await endpointsOf('initech');
    expect(endpoint).toMatchObject({ url: receiver.url, events: ['meritCycle.employees.changed'] });

    receiver.secret = secret;
    const tested = await postForm(PAGE, `${PAGE}/${endpoint?.id}/test`, {});
    expect(tested).toMatchObject({
      status: 303,
      location: `${PAGE}?tested=${encodeURIComponent(endpoint?.id ?? '')}`,
    });
    const [ping] = await receiver.waitFor(1);
    expect(ping).toMatchObject({ verified: true, violations: [], body: { type: 'ping' } });
    let listed = '';
    for (let tries = 0; tries < 100 && !listed.includes('Delivered (HTTP 204)'); tries++) {
      listed = textOf((await admin.get(PAGE)).body);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(listed).toContain('ping Delivered (HTTP 204) 1');
  });

  it('removes an endpoint after a confirmation page', async () => {
    const [endpoint] = await endpointsOf('initech');
    const confirm = await admin.get(`${PAGE}/${endpoint?.id}/remove`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.body)).toContain(
      `Remove ${receiver.url} ? Events meritCycle.employees.changed`,
    );
    const removed = await postForm(
      `${PAGE}/${endpoint?.id}/remove`,
      `${PAGE}/${endpoint?.id}/remove`,
      {},
    );
    expect(removed).toMatchObject({
      status: 303,
      location: `${PAGE}?removed`,
    });
    expect(await endpointsOf('initech')).toEqual([]);
    expect(textOf((await admin.get(removed.location ?? '')).body)).toContain(
      'Removed the endpoint. Nothing more is sent to it.',
    );
  });

  it('a test ping of a disabled endpoint (a form sent from an older page) records nothing and shows the page', async () => {
    const added = await endpointAdded('initech', 'https://hooks.initech.example/gone');
    const fields = hiddenFieldsOf((await admin.get(PAGE)).body, PAGE);
    await server.database.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled' })
      .where('id', '=', added.id)
      .execute();
    const pings = () =>
      server.database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', added.id)
        .execute();
    expect(await admin.post(`${PAGE}/${added.id}/test`, fields)).toMatchObject({
      status: 303,
      location: PAGE,
    });
    expect(await pings()).toEqual([]);
    const page = textOf((await admin.get(PAGE)).body);
    expect(page).toContain('It answered 410 Gone, so nothing more is sent to it.');
    await server.database.db.deleteFrom('webhook_endpoints').where('id', '=', added.id).execute();
  });

  it('answers 404 for another organisation’s endpoint, and changes nothing', async () => {
    const theirs = await endpointAdded('globex', 'https://hooks.globex.example/compplan');
    const fields = hiddenFieldsOf((await admin.get(PAGE)).body, PAGE);
    expect((await admin.get(`${PAGE}/${theirs.id}/remove`)).status).toBe(404);
    expect((await admin.post(`${PAGE}/${theirs.id}/remove`, fields)).status).toBe(404);
    const fresh = hiddenFieldsOf((await admin.get(PAGE)).body, PAGE);
    expect((await admin.post(`${PAGE}/${theirs.id}/test`, fresh)).status).toBe(404);
    expect(await endpointsOf('globex')).toHaveLength(1);
    const events = await server.database.db.selectFrom('webhook_events').select('type').execute();
    expect(events.map((e) => e.type)).toEqual(['ping']);
  });
});
