// What the audit log's filters offer (Settings → Audit log, through src/audit/service.ts):
// every key, revoked ones too, and every user the log names, removed ones too, so that
// an owner can still find what a removed user did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKeyById } from '../../src/api-keys/service.js';
import { auditFilterChoices } from '../../src/audit/service.js';
import { findOrganizationBySlug } from '../../src/tenancy/organizations.js';
import { createUser, removeUser } from '../../src/users/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { WebClient, webDataSet } from '../helpers/web-client.js';

describe('audit log filters', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dataSets: [webDataSet('initech')] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('offer revoked keys and removed users (by the email of their latest entry), after the current users', async () => {
    const { db } = server.database;
    const owner = await createUser(db, {
      org: 'initech',
      email: 'owner@initech.example',
      role: 'owner',
    });
    const leaver = await createUser(db, {
      org: 'initech',
      email: 'leaver@initech.example',
      role: 'admin',
    });
    // Signing in and out records actions of each user (the leaver's with their id).
    expect(
      (await new WebClient(server.url).signIn(owner.email, owner.oneTimePassword)).status,
    ).toBe(303);
    expect(
      (await new WebClient(server.url).signIn(leaver.email, leaver.oneTimePassword)).status,
    ).toBe(303);
    await removeUser(db, 'initech', { id: leaver.id });
    const kept = await createApiKey(db, { org: 'initech', name: 'kept' });
    const revoked = await createApiKey(db, { org: 'initech', name: 'revoked' });
    await revokeApiKeyById(db, revoked.id);

    const organization = await findOrganizationBySlug(db, 'initech');
    const choices = await auditFilterChoices(db, organization?.id ?? '');
    expect(choices.users).toEqual([
      { id: owner.id, email: 'owner@initech.example', removed: false },
      { id: leaver.id, email: 'leaver@initech.example', removed: true },
    ]);
    // In the keys' list order: by creation time, then id (two keys made in the same
    // millisecond are ordered by their random ids).
    const inListOrder = [
      { id: kept.id, name: 'kept', at: kept.createdAt },
      { id: revoked.id, name: 'revoked', at: revoked.createdAt },
    ].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1));
    expect(choices.keys.map((key) => [key.id, key.name])).toEqual(
      inListOrder.map((key) => [key.id, key.name]),
    );
  });
});
