// Closing the HTTP server (what SIGTERM does): src/http/drain.ts decides which connections
// close at once and which after their answer, and when the server stops listening. A plain
// node:http server with the drain installed, over real loopback connections, so that each case is set up exactly: an
// answer still in the socket's queue, a request in flight, an idle kept-alive connection.
import { once } from 'node:events';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type Drain, drainConnections } from '../../src/http/drain.js';

// Far more than loopback's socket buffers hold, so the write is still queued in Node
// while the client does not read.
const LARGE_BODY = Buffer.alloc(48 * 1024 * 1024, 'x');

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server | undefined;
let drain: Drain | undefined;
let agent: Agent | undefined;

async function listen(handler: Handler): Promise<number> {
  server = createServer({ keepAlive: true }, handler);
  drain = drainConnections(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** The drain's close (what app.close() runs), resolving when the server has let go of every connection. */
function closeServer(): Promise<void> {
  return drain?.close() ?? Promise.resolve();
}

function get(port: string | number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, agent }, resolve);
    request.on('error', reject);
    request.end();
  });
}

async function bodyOf(response: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

afterEach(async () => {
  agent?.destroy();
  agent = undefined;
  if (server?.listening) server.closeAllConnections();
  server?.close();
  server = undefined;
  drain = undefined;
});

describe('closing the server', () => {
  it('delivers an answer still being written when the server closes whole, then closes its connection', async () => {
    agent = new Agent({ keepAlive: true });
    let ended!: () => void;
    const answerEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const port = await listen((_request, response) => {
      response.writeHead(200, { 'content-length': LARGE_BODY.length });
      response.end(LARGE_BODY);
      ended();
    });
    const response = await get(port, '/large');
    const socket = response.socket;
    const socketClosed = once(socket, 'close');
    // The client reads nothing yet: most of the body is still queued on the server.
    response.pause();
    await answerEnded;
    expect(socket.bytesRead).toBeLessThan(LARGE_BODY.length);
    const closed = closeServer();
    await sleep(200);
    const body = await bodyOf(response);
    expect(body.length).toBe(LARGE_BODY.length);
    await closed;
    await socketClosed;
  });

  it('answers a request in flight when the server closes, with "connection: close", and then lets go of the connection', async () => {
    agent = new Agent({ keepAlive: true });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const port = await listen(async (_request, response) => {
      arrived();
      await released;
      response.end('done');
    });
    const answer = get(port, '/slow');
    await requestArrived;
    const closed = closeServer();
    release();
    const response = await answer;
    expect(response.headers.connection).toBe('close');
    expect((await bodyOf(response)).toString()).toBe('done');
    await closed;
  });

  it('closes a kept-alive connection that is between requests within a second', async () => {
    agent = new Agent({ keepAlive: true });
    const port = await listen((_request, response) => response.end('ok'));
    const response = await get(port, '/');
    const socket = response.socket;
    const socketClosed = once(socket, 'close');
    expect(response.headers.connection).toBe('keep-alive');
    await bodyOf(response);
    const started = performance.now();
    await closeServer();
    await socketClosed;
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('answers, with "connection: close", a request sent on an idle kept-alive connection as the server closes', async () => {
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const port = await listen((request, response) => response.end(`answer to ${request.url}`));
    const first = await get(port, '/first');
    expect(first.headers.connection).toBe('keep-alive');
    const socket = first.socket;
    await bodyOf(first);
    // The next request leaves on the same connection right after the server starts to
    // close: it is on the wire when the server looks for idle connections.
    const closed = closeServer();
    const second = await get(port, '/second');
    expect(second.socket).toBe(socket);
    expect(second.headers.connection).toBe('close');
    expect((await bodyOf(second)).toString()).toBe('answer to /second');
    await closed;
  });

  it('leaves a connection that has sent nothing yet open, and serves its first request with "connection: close"', async () => {
    const port = await listen((_request, response) => response.end('late but served'));
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    const socketClosed = once(socket, 'close');
    const closed = closeServer();
    await sleep(200);
    expect(socket.destroyed).toBe(false);
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await socketClosed;
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(text.endsWith('\r\n\r\nlate but served')).toBe(true);
  });
});
