// A compressed answer whose source fails (src/http/compression.ts): mid-way, the response
// ends at once and its connection closes, rather than the client waiting on an encoder
// that never finishes; before its first byte, the error is answered as any other. No route of the app serves a stream that can be made to fail on
// demand (the reference's assets are files), so a Fastify server with the compression step
// as its onSend hook serves one, over a real loopback connection.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { compress } from '../../src/http/compression.js';

// Far below any timeout of a server; far above the few milliseconds a closed connection
// takes to reach the client on loopback. Only the detector of a hang, never a speed bound.
const CLIENT_TIMEOUT_MS = 3_000;

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * A text body that sends its first bytes (random text, so that gzip has output to send),
 * then fails once `failed` resolves; at once when there are no first bytes.
 */
function failingSource(bytesFirst: number, failed: Promise<void>): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent && bytesFirst > 0) {
        sent = true;
        this.push(randomBytes(bytesFirst).toString('base64'));
        return;
      }
      void failed.then(() => this.destroy(new Error('the source failed')));
    },
  });
}

async function serveFailingStream(bytesFirst: number, failed: Promise<void>): Promise<number> {
  app = Fastify({ logger: false });
  app.addHook('onSend', async (request, reply, payload) => compress(request, reply, payload));
  app.get('/failing', (_request, reply) => {
    reply.type('text/plain; charset=utf-8').send(failingSource(bytesFirst, failed));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

interface Outcome {
  status: number;
  encoding: string | undefined;
  /** complete: the whole body; closed: the connection ended mid-body; timed out: a hang. */
  ended: 'complete' | 'closed' | 'timed out';
  body: string;
}

/** GET with gzip accepted: how the answer ended, as the client saw it. */
function fetchGzip(port: number, onHeaders: () => void = () => {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path: '/failing', headers: { 'accept-encoding': 'gzip' } },
      (response) => {
        onHeaders();
        const chunks: Buffer[] = [];
        const outcome = (ended: Outcome['ended']) =>
          resolve({
            status: response.statusCode ?? 0,
            encoding: response.headers['content-encoding'],
            ended,
            body: Buffer.concat(chunks).toString('latin1'),
          });
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => outcome(response.complete ? 'complete' : 'closed'));
        response.on('error', () => outcome(timedOut ? 'timed out' : 'closed'));
      },
    );
    let timedOut = false;
    request.setTimeout(CLIENT_TIMEOUT_MS, () => {
      timedOut = true;
      request.destroy(new Error('no end within the client timeout'));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('a compressed answer whose source fails', () => {
  it('ends the response and closes its connection at once when the source fails mid-answer (gzip accepted)', async () => {
    let fail!: () => void;
    const failed = new Promise<void>((resolve) => {
      fail = resolve;
    });
    const port = await serveFailingStream(256 * 1024, failed);

    // The source fails once the answer has begun: its headers are with the client.
    const outcome = await fetchGzip(port, fail);

    expect(outcome).toMatchObject({ status: 200, encoding: 'gzip', ended: 'closed' });
  });

  it('answers 500, its JSON body not labelled gzip, when the source fails before its first byte', async () => {
    const port = await serveFailingStream(0, Promise.resolve());

    const outcome = await fetchGzip(port);

    expect(outcome).toMatchObject({ status: 500, encoding: undefined, ended: 'complete' });
    expect(JSON.parse(outcome.body)).toMatchObject({ statusCode: 500 });
  });
});
