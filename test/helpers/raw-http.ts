// HTTP at the level of bytes, for the hardening tests: what node:http or fetch would
// refuse to send (broken request lines, oversized or trickled headers, no Host), from a
// chosen loopback address, with a deadline so that no test can hang on a silent server.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface ByteResponse {
  /** 0 when the server closed the connection without an answer. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the server closing the connection. */
  elapsedMs: number;
}

/** Parses one HTTP/1.1 response (Content-Length framed, as every compplan answer is). */
export function parseResponse(text: string): Omit<ByteResponse, 'elapsedMs'> {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: text };
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: text.slice(end + 4) };
}

/** Whether `data` holds a whole response: its head and Content-Length bytes of body. */
function isComplete(data: Buffer): boolean {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(data.subarray(0, end).toString('latin1'));
  return length !== null && data.length - (end + 4) >= Number(length[1]);
}

/**
 * Writes `chunks` to a fresh connection, `gapMs` apart, and reads until the server closes
 * the connection (or `deadlineMs` passes, which fails the call).
 */
export function sendBytes(
  url: string,
  chunks: readonly (string | Buffer)[],
  options: {
    gapMs?: number;
    deadlineMs?: number;
    localAddress?: string;
    /** Resolve as soon as one whole response has arrived, without waiting for the close. */
    firstResponse?: boolean;
  } = {},
): Promise<ByteResponse> {
  const { hostname, port } = new URL(url);
  const deadlineMs = options.deadlineMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket: Socket = connect({
      host: hostname,
      port: Number(port),
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    const received: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of response within ${deadlineMs} ms`));
    }, deadlineMs);
    const finish = () => {
      clearTimeout(deadline);
      clearTimeout(timer);
      resolve({
        ...parseResponse(Buffer.concat(received).toString('utf8')),
        elapsedMs: Date.now() - started,
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (options.firstResponse && isComplete(Buffer.concat(received))) {
        socket.destroy();
        finish();
      }
    });
    // A server that answers and closes while we still write makes EPIPE/ECONNRESET: the
    // answer already read is what counts.
    socket.on('error', () => {});
    socket.on('close', finish);
    let next = 0;
    const writeNext = () => {
      if (socket.destroyed || next >= chunks.length) return;
      socket.write(chunks[next++] ?? '');
      timer = setTimeout(writeNext, options.gapMs ?? 0);
    };
    socket.once('connect', writeNext);
  });
}

export interface NodeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as sent, decoded as UTF-8 (not decompressed). */
  body: string;
  rawBody: Buffer;
}

/**
 * One request through node:http, exactly as given: the target is not normalised (broken
 * percent-encoding, unicode and repeated parameters arrive as written), headers may be any
 * size, and the call fails rather than hangs after `deadlineMs`.
 */
export function nodeRequest(
  url: string,
  target: string,
  options: {
    method?: string;
    headers?: Record<string, string | string[]>;
    body?: string | Buffer;
    localAddress?: string;
    deadlineMs?: number;
  } = {},
): Promise<NodeResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: hostname,
        port,
        path: target,
        method: options.method ?? 'GET',
        headers: {
          ...(options.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
        agent: false,
        // The client's own limit must not hide the server's (node:http defaults to 16 KiB).
        maxHeaderSize: 1024 * 1024,
        insecureHTTPParser: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const rawBody = Buffer.concat(chunks);
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: rawBody.toString('utf8'),
            rawBody,
          });
        });
        response.on('error', reject);
      },
    );
    request.setTimeout(options.deadlineMs ?? 10_000, () =>
      request.destroy(new Error(`no response to ${target} within the deadline`)),
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
