// The whole-request bound (SERVER_TIMEOUTS.requestMs in src/app.ts): a request's body must
// have arrived within it of the request's headers, else 408 and the connection is closed,
// as Node's own `requestTimeout` answers (client-errors.ts). Node's bound is one for the
// whole server; this one is left out by the routes that are timed by their progress
// instead (`config: { timedByProgress: true }`: the web application's upload, where 100 MB
// over a slow office line takes minutes — src/import/upload-pace.ts bounds it), so the
// server's `requestTimeout` is 0 and every other request is bounded here, exactly as
// before. Requests without a body (every API request) are told by their headers and cost
// two header reads.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { REQUEST_TIMED_OUT, refuseOnSocket } from './client-errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The request's body is timed by its progress, not by the whole-request bound. */
    timedByProgress?: boolean;
  }
}

export function boundRequestReceipt(
  app: FastifyInstance,
  bounds: { requestMs: number; checkIntervalMs: number },
): void {
  const waiting = new Map<IncomingMessage, number>();
  let sweeper: NodeJS.Timeout | undefined;

  const sweep = () => {
    const now = Date.now();
    for (const [raw, since] of waiting) {
      const socket = raw.socket;
      if (raw.complete || socket.destroyed) waiting.delete(raw);
      else if (now - since >= bounds.requestMs) {
        waiting.delete(raw);
        app.log.info(
          {
            code: 'ERR_HTTP_REQUEST_TIMEOUT',
            statusCode: 408,
            remoteAddress: socket.remoteAddress,
          },
          'refused a request whose body did not arrive in time',
        );
        refuseOnSocket(socket, 408, REQUEST_TIMED_OUT, '', raw.method === 'HEAD');
      }
    }
    if (waiting.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    // A body is announced by its length or its chunked coding (RFC 9112, 6.3).
    const body =
      raw.headers['transfer-encoding'] !== undefined ||
      Number(raw.headers['content-length'] ?? 0) > 0;
    if (body && !raw.complete && request.routeOptions.config.timedByProgress !== true) {
      waiting.set(raw, Date.now());
      sweeper ??= setInterval(sweep, bounds.checkIntervalMs).unref();
    }
    done();
  });
  app.addHook('onClose', (_app, done) => {
    if (sweeper) clearInterval(sweeper);
    waiting.clear();
    done();
  });
}
