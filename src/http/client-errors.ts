// Answers for requests that never become requests: Node's HTTP parser refuses them
// (headers too large, a request line it cannot read, a client too slow to send its
// headers) before Fastify sees them. They get the same JSON error body as every other
// error (docs/api-behaviour.md, "Errors"), then the connection is closed.
//
// Fastify's default handler answers these too, but with another body shape, and logs the
// parser error whole at trace level: that error carries the raw bytes received, the
// x-api-key header among them. Here only the error code is logged.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';
import { API_RESPONSE_HEADERS } from './security-headers.js';

// Node hands over the bytes received so far as a Buffer (fastify's type says otherwise).
type ParserError = Omit<ConnectionError, 'rawPacket'> & { rawPacket?: Buffer };

/** The path of the request line in what was received, when it can be read and is short. */
function pathOf(rawPacket: Buffer | undefined, maxLength: number): string {
  if (!rawPacket) return '';
  const head = rawPacket.subarray(0, maxLength + 32).toString('latin1');
  const match = /^[A-Z]{1,16} (\/[^\s?#]*)[^\s]* HTTP\/1\.[01]\r?\n/.exec(head);
  const path = match?.[1] ?? '';
  return path.length <= maxLength ? path : '';
}

/** The message of a request whose headers or body did not arrive in time (408). */
export const REQUEST_TIMED_OUT = 'Request Timeout: the request was not received in time';

function classify(error: ParserError, maxUrlLength: number): { status: number; message: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: REQUEST_TIMED_OUT };
    case 'HPE_HEADER_OVERFLOW': {
      // When the request line alone is longer than any URL may be, the URL is the problem.
      const received = error.rawPacket?.toString('latin1') ?? '';
      const lineEnd = received.indexOf('\n');
      const requestLine = lineEnd === -1 ? received.length : lineEnd;
      return requestLine > maxUrlLength
        ? { status: 414, message: 'URI Too Long' }
        : { status: 431, message: 'Request Header Fields Too Large' };
    }
    default:
      return { status: 400, message: 'Bad Request: the request could not be parsed' };
  }
}

/** A `clientErrorHandler` for Fastify; URLs longer than `maxUrlLength` are 414. */
export function clientErrorHandler(maxUrlLength: number) {
  return function handle(this: FastifyInstance, connectionError: ConnectionError, socket: Socket) {
    const error = connectionError as unknown as ParserError;
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, message } = classify(error, maxUrlLength);
    this.log.info(
      { code: error.code, statusCode: status, remoteAddress: socket.remoteAddress },
      'refused a request the HTTP parser could not accept',
    );
    const isHead = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    refuseOnSocket(socket, status, message, pathOf(error.rawPacket, maxUrlLength), isHead);
  };
}

/**
 * Answers `status` with the standard JSON error body straight on the socket, then closes
 * it: for a request nothing else will answer (the parser refused it, or its body did not
 * arrive in time: request-deadline.ts).
 */
export function refuseOnSocket(
  socket: Socket,
  status: number,
  message: string,
  path: string,
  isHead: boolean,
): void {
  if (socket.writable) {
    const body = JSON.stringify({
      timestamp: new Date().toISOString(),
      path,
      message,
      statusCode: status,
    });
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      ...API_RESPONSE_HEADERS,
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    // An answer to HEAD has the headers of the answer to GET, and no body.
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${isHead ? '' : body}`);
  }
  socket.destroySoon();
}
