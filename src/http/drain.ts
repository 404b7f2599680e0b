// How the HTTP server lets go of its connections when it closes (SIGTERM): it stops
// accepting, answers every request that reached it, and closes each kept-alive
// connection as soon as nothing is left to write on it.
//
// Node's server.close() closes the "idle" connections at once (closeIdleConnections), and
// counts a connection as idle as soon as its response has been ended, while the bytes may
// still be queued for the socket: a page written to a busy or slow client is then cut
// short and the client sees ECONNRESET for a request it sent to a live server. Here a
// connection is idle only between exchanges: its last response is wholly handed to the
// kernel. A connection that has not carried a request yet is left to the headers timeout,
// as Node leaves it (its first request may be on the wire).
//
// An idle connection is closed after a short grace, not at once: a client that has just
// had its answer may already have sent its next request on the same connection, still on
// the wire when the server closes. Closed at once, the client got ECONNRESET for a request
// it sent to a live server (seen under load in test/production/faults.test.ts); within
// the grace the request arrives, is answered, and the connection closes after it.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// Far longer than a request spends on the wire between a client and this server (or
// nginx in front of it); short beside the shutdown's 10 s.
const IDLE_GRACE_MS = 250;

/** Replaces the server's closeIdleConnections (which close() calls) with the sweep above. */
export function drainOnClose(server: Server): void {
  // Connections that have carried a request → their responses not yet flushed.
  const connections = new Map<Socket, Set<ServerResponse>>();
  let closing = false;

  const closeAfterThis = (response: ServerResponse) => {
    // The client learns not to send another request on this connection, and Node ends
    // the connection once the response is flushed.
    if (!response.headersSent) response.setHeader('connection', 'close');
  };

  // First among the listeners: the response is tracked before any handler can end it.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    let pending = connections.get(socket);
    if (pending === undefined) {
      pending = new Set();
      connections.set(socket, pending);
      socket.once('close', () => connections.delete(socket));
    }
    pending.add(response);
    if (closing) closeAfterThis(response);
    // 'close' follows 'finish' (the last byte is with the kernel) or an aborted exchange.
    response.once('close', () => {
      pending.delete(response);
      if (closing && pending.size === 0) socket.destroy();
    });
  });

  const destroyIfIdle = () => {
    for (const [socket, pending] of connections) if (pending.size === 0) socket.destroy();
  };

  server.closeIdleConnections = () => {
    // After the next poll for I/O too: a busy event loop may run the timer before it
    // reads a request that reached the socket within the grace.
    if (!closing) setTimeout(() => setImmediate(destroyIfIdle), IDLE_GRACE_MS).unref();
    closing = true;
    for (const pending of connections.values()) {
      for (const response of pending) closeAfterThis(response);
    }
  };
}
