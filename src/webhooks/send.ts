// One attempt at one delivery: a POST to the endpoint's URL, at the address its host was
// resolved to and checked at (address-filter.ts), signed per Standard Webhooks 1.0 with
// the maintained `standardwebhooks` package. No redirect is followed (a 3xx answer is a
// failed attempt), the whole attempt has 10 s, and at most 4 KiB of the answer are read.

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { RefusedAddressError, type ResolvedAddress, resolveTarget } from './address-filter.js';

/** docs/webhooks.md, "Delivery and retries": a 2xx answer within 10 s is success. */
const ATTEMPT_TIMEOUT_MS = 10_000;
// Enough for an error message a receiver sends back; a receiver cannot make us keep more.
const MAX_RESPONSE_BYTES = 4 * 1024;
/** How much of an answer is stored with the delivery, to show in lists. */
const RESPONSE_EXCERPT_CHARS = 200;

export interface SignedRequest {
  url: string;
  /** The webhook-id: the delivery's id, the same on every attempt. */
  id: string;
  /** `{ type, timestamp, data }`, exactly as sent and signed. */
  body: string;
  /** The endpoint's whsec_ secret. */
  secret: string;
}

export type AttemptResult =
  | { kind: 'answered'; status: number; excerpt: string }
  /** Nothing usable came back: refused address, DNS, connection, timeout. */
  | { kind: 'failed'; reason: string }
  /** Stopped by shutdown: not an attempt that counts. */
  | { kind: 'interrupted' };

/** The Standard Webhooks headers of a body, signed at `at` (the attempt's time). */
function signedHeaders(request: SignedRequest, at: Date): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': request.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': new Webhook(request.secret).sign(
      request.id,
      new Date(timestamp * 1000),
      request.body,
    ),
  };
}

/** Resolves to the checked addresses only: the connection goes where the check looked. */
const pinnedLookup =
  (addresses: ResolvedAddress[]): LookupFunction =>
  (_hostname, options, callback) => {
    const [first] = addresses;
    if (options.all) callback(null, addresses);
    else if (first) callback(null, first.address, first.family);
  };

function post(
  url: URL,
  addresses: ResolvedAddress[],
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'compplan-webhooks',
      },
      // A connection of its own: never one kept from another endpoint's delivery.
      agent: false,
      lookup: pinnedLookup(addresses),
      signal,
    });
    request.on('error', reject);
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        resolve({
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8'),
        });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_RESPONSE_BYTES) done();
      });
      response.on('end', done);
      response.on('error', reject);
    });
    request.end(body);
  });
}

export async function attemptDelivery(
  request: SignedRequest,
  allowed: Parameters<typeof resolveTarget>[1],
  stop: AbortSignal,
  now: Date = new Date(),
): Promise<AttemptResult> {
  const signal = AbortSignal.any([stop, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]);
  try {
    const url = new URL(request.url);
    const addresses = await resolveTarget(url, allowed);
    signal.throwIfAborted();
    const answer = await post(url, addresses, signedHeaders(request, now), request.body, signal);
    return {
      kind: 'answered',
      status: answer.status,
      excerpt: answer.text.slice(0, RESPONSE_EXCERPT_CHARS),
    };
  } catch (error) {
    if (stop.aborted) return { kind: 'interrupted' };
    if (signal.aborted)
      return { kind: 'failed', reason: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` };
    if (error instanceof RefusedAddressError) return { kind: 'failed', reason: error.message };
    const code = (error as NodeJS.ErrnoException).code;
    return {
      kind: 'failed',
      reason:
        `${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`.slice(
          0,
          RESPONSE_EXCERPT_CHARS,
        ),
    };
  }
}
