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
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

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

  server.closeIdleConnections = () => {
    closing = true;
    for (const [socket, pending] of connections) {
      if (pending.size === 0) socket.destroy();
      else for (const response of pending) closeAfterThis(response);
    }
  };
}
