// How the HTTP server lets go of its connections when it closes (SIGTERM): it answers
// every request that reached it, closes each kept-alive connection as soon as nothing is
// left to write on it, and only then stops listening — with Node's documented API alone
// (the 'request' event, a response's writableEnded / writableFinished and 'close',
// socket.destroy(), server.close()).
//
// Node's server.close() closes the "idle" connections at once (closeIdleConnections), and
// counts a connection as idle as soon as its response has been ended, while the bytes may
// still be queued for the socket: a page written to a busy or slow client is then cut
// short and the client sees ECONNRESET for a request it sent to a live server. So
// server.close() is called only at a moment when no answer is ended but unflushed, and
// after every idle connection has been closed here: Node's sweep then finds nothing of
// ours to cut. Here a connection is idle only between exchanges: its last response wholly
// handed to the kernel. A connection that has not carried a request yet is left to the
// headers timeout, as Node leaves it (its first request may be on the wire).
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

export interface Drain {
  /**
   * From now on every answer says `Connection: close` and its connection closes once the
   * answer is flushed; connections idle between exchanges close after the grace.
   */
  begin(): void;
  /**
   * begin(), then stops listening once the idle connections are closed and no answer is
   * still being handed to the kernel; resolves when the server has let go of every
   * connection.
   */
  close(): Promise<void>;
  /**
   * Calls `listener` when the drain begins: an answer that may stream for long (a bulk
   * download) ends itself within the shutdown's grace, since close() waits for it.
   */
  onBegin(listener: () => void): void;
}

/** Tracks the server's exchanges (from now on) so that it can be closed as above. */
export function drainConnections(server: Server): Drain {
  // Connections that have carried a request → their responses not yet flushed.
  const connections = new Map<Socket, Set<ServerResponse>>();
  let swept: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  const beginListeners: (() => void)[] = [];

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
    if (swept) closeAfterThis(response);
    // 'close' follows 'finish' (the last byte is with the kernel) or an aborted exchange.
    response.once('close', () => {
      pending.delete(response);
      if (swept && pending.size === 0) socket.destroy();
    });
  });

  const idle = () => [...connections].filter(([, pending]) => pending.size === 0);

  const begin = () => {
    if (swept) return;
    for (const listener of beginListeners) listener();
    for (const pending of connections.values()) {
      for (const response of pending) closeAfterThis(response);
    }
    // Without idle connections there is nothing to wait for.
    if (idle().length === 0) {
      swept = Promise.resolve();
      return;
    }
    swept = new Promise((resolve) => {
      // After the next poll for I/O too: a busy event loop may run the timer before it
      // reads a request that reached the socket within the grace.
      setTimeout(
        () =>
          setImmediate(() => {
            for (const [socket] of idle()) socket.destroy();
            resolve();
          }),
        IDLE_GRACE_MS,
      ).unref();
    });
  };

  /** server.close() at the first moment no answer is ended but still being written. */
  const stopListening = (done: () => void) => {
    const unflushed: ServerResponse[] = [];
    for (const pending of connections.values()) {
      for (const response of pending) {
        if (response.writableEnded && !response.writableFinished) unflushed.push(response);
      }
    }
    if (unflushed.length === 0) {
      server.close(() => done());
      return;
    }
    // Looked at again once one of them is flushed, after the ticks its 'close' queued.
    let waiting = true;
    const again = () => {
      if (!waiting) return;
      waiting = false;
      setImmediate(() => stopListening(done));
    };
    for (const response of unflushed) response.once('close', again);
  };

  const close = async () => {
    begin();
    await swept;
    await new Promise<void>((resolve) => stopListening(resolve));
  };

  return {
    begin,
    onBegin: (listener) => {
      beginListeners.push(listener);
    },
    close: () => {
      // A server that never listened (an app used through inject) has nothing to let go.
      if (!server.listening) return Promise.resolve();
      closed ??= close();
      return closed;
    },
  };
}
