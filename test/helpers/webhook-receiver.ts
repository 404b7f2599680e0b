// A webhook receiver for tests: a real node:http server on loopback that verifies every
// request's signature with the `standardwebhooks` library (as a subscriber would) and
// answers as the test says. Every body is also checked against the OpenAPI document's
// `webhooks`. Nothing is sent anywhere but to loopback.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { webhookPayloadViolations } from './openapi-contract.js';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  /** Whether standardwebhooks verified the signature with the endpoint's secret. */
  verified: boolean;
  /** How the body departs from the OpenAPI document's `webhooks` (empty: it does not). */
  violations: string[];
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  rawBody: string;
}

/** What to answer: a status (and body), or `hang` to hold the request unanswered. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  /** e.g. http://127.0.0.1:41234/hook */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Set once the endpoint is added: every request is verified against it. */
  secret: string | undefined;
  /** How the next requests are answered, in turn; after the last, `otherwise`. */
  answers: Answer[];
  otherwise: Answer;
  /** Resolves once `count` requests have arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /**
   * Resolves once no connection to the receiver is open. After every sender has gone,
   * everything they sent has been received: a request is read to its end before the
   * connection that carried it closes.
   */
  settled(timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  host = '127.0.0.1',
  path = '/hook',
): Promise<WebhookReceiver> {
  const held: ServerResponse[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const connections = new Set<Socket>();
  const onIdle: (() => void)[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    secret: undefined,
    answers: [],
    otherwise: { status: 204 },
    waitFor(count, timeoutMs = 15_000) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `${count} webhook requests expected within ${timeoutMs} ms, ${receiver.received.length} arrived`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received);
          },
        });
      });
    },
    settled(timeoutMs = 15_000) {
      if (connections.size === 0) return Promise.resolve(receiver.received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`${connections.size} connections still open after ${timeoutMs} ms`)),
          timeoutMs,
        );
        onIdle.push(() => {
          clearTimeout(timer);
          resolve(receiver.received);
        });
      });
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      );
      const body = JSON.parse(rawBody) as ReceivedWebhook['body'];
      let verified = false;
      try {
        if (receiver.secret) new Webhook(receiver.secret).verify(rawBody, headers);
        verified = receiver.secret !== undefined;
      } catch {
        verified = false;
      }
      receiver.received.push({
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        verified,
        violations: webhookPayloadViolations(body),
        body,
        rawBody,
      });
      const answer = receiver.answers.shift() ?? receiver.otherwise;
      if (answer === 'hang') held.push(response);
      else response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      for (const waiter of [...waiters]) {
        if (receiver.received.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      if (connections.size === 0) for (const idle of onIdle.splice(0)) idle();
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://${host.includes(':') ? `[${host}]` : host}:${receiver.port}${path}`;
  return receiver;
}
