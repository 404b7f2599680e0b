// The feed's $metadata checked by a validator nobody here wrote: xmllint (Debian's
// libxml2-utils) against OASIS's published CSDL XML schemas (test/fixtures/csdl-xsd), for
// keys of every scope (docs/odata.md, "Verified by"). The interop project needs xmllint, so
// a machine without it reports this file skipped for lack of it instead of failing to spawn.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACME, acmeDataSet } from '../fixtures/data-sets.js';
import { FEED_CYCLE, FEEDCO, feedDataSet } from '../fixtures/feed-data-sets.js';
import { FEED } from '../helpers/feed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EDMX_XSD = fileURLToPath(new URL('../fixtures/csdl-xsd/edmx.xsd', import.meta.url));

/** xmllint's verdict on a document against OASIS's EDMX schema (which imports EDM's). */
function validateCsdl(xml: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('xmllint', ['--noout', '--schema', EDMX_XSD, '-']);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(xml);
  });
}

describe("the feed's $metadata against OASIS's CSDL XML schemas", () => {
  let server: TestServer;
  let keys: string[];

  beforeAll(async () => {
    server = await startTestServer({ dataSets: [feedDataSet(), acmeDataSet()] });
    keys = [
      await server.createKey(FEEDCO, 'bi'),
      await server.createKey(FEEDCO, 'dashboard', {
        cycles: [FEED_CYCLE.usd],
        hiddenColumns: ['basePay'],
      }),
      await server.createKey(ACME, 'acme'),
    ];
  });
  afterAll(() => server.close());

  it('validates for keys of every scope, and a document the schema refuses is refused', async () => {
    for (const key of keys) {
      const response = await fetch(`${server.url}${FEED}/$metadata`, {
        headers: { 'x-api-key': key, accept: 'application/xml' },
      });
      expect(response.status).toBe(200);
      const verdict = await validateCsdl(await response.text());
      expect(verdict.output).toContain('- validates');
      expect(verdict.code).toBe(0);
    }
    // The check is a real one: a document the schema refuses is refused.
    const broken = await validateCsdl(
      '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:Nothing/></edmx:Edmx>',
    );
    expect(broken.code).not.toBe(0);
  });
});
