// Every bound compplan puts on its waits for PostgreSQL, in one place, with the reason for
// each (docs/operations.md, "Limits and timeouts", gives the same numbers). The server's
// own statement timeout cannot help when the server stops answering (a network cut, a
// frozen host, a disk that blocks writes): it is the server that enforces it. So every
// wait has a bound kept by this process. Imports nothing at run time, so that the
// command line's messages (src/cli/database-failures.ts) can name the numbers without
// loading the drivers.
import type { PostgresBounds } from '../config.js';

// A request meets a server that stopped answering in one wait: for a new connection
// (`connectMs`) or for a statement's answer (`queryMs`), each counted from when it began.
// docs/operations.md promises the client its 503 within 3 s: these waits are 2.5 s, and
// the half second left is for what the request does around the wait (authentication, its
// turn, taking a connection, the error's answer) and for a timer that fires late on a busy
// event loop. With both at 3 s the 503 came after 3.05–3.4 s (test/db/frozen-bound.test.ts
// measures it on a frozen server).
export const POSTGRES_BOUNDS: PostgresBounds = Object.freeze({
  // Opening a connection (TCP, TLS, start-up, authentication) takes milliseconds; a
  // server that accepts the TCP connection but does not answer the start-up (frozen,
  // overloaded) is given this long. node-postgres uses the same option for the wait for
  // a connection from a full pool, so it bounds that wait too.
  connectMs: 2_500,
  // The server cancels a statement of the API that runs longer (504 to the client). The
  // API's statements are keyset reads that take milliseconds; 2 s is far beyond any of
  // them, and below `queryMs`, so that a slow statement is cancelled by the server (and
  // the connection kept) before this process gives up on it.
  statementMs: 2_000,
  // How long this process waits for the answer to one statement of the API (node-postgres's
  // query_timeout): the statement timeout and half a second for the server's cancellation
  // to arrive. No answer by then: the server is not answering; the request gets 503 and
  // the connection is closed, never used again (it would answer the next statement with
  // this one's late result, or not at all).
  queryMs: 2_500,
  // How long a request may wait for a turn at the pool (src/db/fair-turns.ts), then 503:
  // two full statements' worth, so that a burst queued behind busy connections is served,
  // while a request never waits without end behind a database that is far behind.
  turnWaitMs: 5_000,
  // /readyz answers "not ready" when `select 1` has not answered within this: a healthy
  // server answers in milliseconds, and a load balancer's probe usually gives up after
  // 2–5 s, so the probe gets an answer rather than a hang of its own.
  readinessMs: 2_000,
  // TCP keepalive on every connection, idle ones included: the first probe after this
  // long without traffic. It keeps firewalls and NAT from dropping idle pool connections
  // silently, and lets the kernel notice a peer that has vanished (a cut network, a dead
  // host) instead of the pool handing out a connection that can never answer.
  keepAliveMs: 10_000,
});

// Work whose statements may rightly take long (migrations, an import, a cycle's removal)
// gets no bound per statement: instead, while one of its statements has been running for
// `queryMs`, the server is asked `select 1` on a connection of its own, once every
// `queryMs`; when that probe gets no answer within `connectMs` (to connect) and `queryMs`
// (to answer), the server is deemed not answering and the work's connections are closed,
// so the work fails (and its transaction is never committed) within
// 2 × queryMs + connectMs of the server stopping. (src/db/liveness.ts)
export function longWorkDetectionMs(bounds: PostgresBounds): number {
  return 2 * bounds.queryMs + bounds.connectMs;
}
