// API key authentication (docs/api-behaviour.md, "Authentication"): the key in the
// x-api-key header, or as the password of HTTP Basic authentication with any user name
// (what Excel, Power BI and Tableau offer for a feed: docs/bi-tools.md). Never in the URL.
// The verifier and its cache live as long as the app; `authenticate` is the pipeline's
// step that uses it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { addressInRanges } from '../address-ranges.js';
import { SECRET_PREFIX } from '../api-keys/secret.js';
import { ApiKeyVerifier, type AuthenticatedKey, UNCONFIRMED_MS } from '../api-keys/verifier.js';
import { ApiError, addressRefused, unauthorized } from '../errors.js';
import type { ReadScope } from '../tenancy/scope.js';
import { sendTooManyRequests } from './rate-limit.js';
import { routeConfigOf } from './route-config.js';

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyVerifier;
  }
  interface FastifyRequest {
    /** Set by authenticate for a request with a valid key. */
    apiKey: AuthenticatedKey | null;
  }
}

export const API_KEY_HEADER = 'x-api-key';

/** The challenge of every 401 of the API (RFC 9110 section 11.6.1; RFC 7617 for Basic). */
export const BASIC_CHALLENGE = 'Basic realm="compplan"';

const BASIC_SCHEME = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i;

/** The user name and password of Basic credentials (RFC 7617: base64 of `user:password`). */
function basicCredentials(request: FastifyRequest): { user: string; password: string } | null {
  const authorization = request.headers.authorization;
  if (authorization === undefined) return null;
  const credentials = BASIC_SCHEME.exec(authorization)?.[1];
  if (credentials === undefined) return null;
  const text = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon === -1 ? null : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * The key a request presents: its x-api-key header, else the password of its Basic
 * credentials (the user name anything, even empty), or their user name when the password
 * is empty (`curl -u KEY:`); undefined when it presents none. Any other Authorization
 * scheme presents no key.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers[API_KEY_HEADER];
  if (header !== undefined) return typeof header === 'string' ? header : '';
  if (request.headers.authorization === undefined) return undefined;
  const credentials = basicCredentials(request);
  if (credentials === null) return '';
  return credentials.password === '' ? credentials.user : credentials.password;
}

/**
 * The 401 of a key refused. Basic credentials whose user name has a key's shape and whose
 * password is something else put the key in the wrong field (a BI tool's dialog asks for a
 * user name first): the message says where it goes. It says so by shape alone, whether or
 * not the user name is a valid key, so the answer tells nothing about a key's validity.
 */
function refusal(request: FastifyRequest) {
  const credentials =
    request.headers[API_KEY_HEADER] === undefined ? basicCredentials(request) : null;
  if (credentials?.user.startsWith(SECRET_PREFIX) && credentials.password !== '') {
    return new ApiError(
      401,
      'Missing or invalid API key: with HTTP Basic authentication the key goes in the password field (with any user name), not in the user name',
    );
  }
  return unauthorized();
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route outside the API that counts a valid key it is sent (a 405 of an API path). */
    countsKey?: boolean;
  }
}

/**
 * Whether a request needs a key: every API route; a path that does not exist and a
 * method the API does not have, only when they are sent one — then it is checked and
 * counted like any (every authenticated response carries the quota: docs/api-behaviour.md,
 * "Rate limits"); the web application, the reference and the health checks never.
 */
function keyPolicy(request: FastifyRequest): 'required' | 'when-sent' | 'none' {
  const config = routeConfigOf(request);
  if (config.api) return 'required';
  return request.is404 || config.countsKey ? 'when-sent' : 'none';
}

/**
 * The authenticate step of the pipeline (src/http/pipeline.ts): sets request.apiKey, or
 * answers (429 for an address over its failed-authentication limit: the reply is
 * returned) or throws (401).
 */
export async function authenticate(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const policy = keyPolicy(request);
  if (policy === 'none') return;
  const secret = presentedKey(request);
  if (policy === 'when-sent' && secret === undefined) return;
  const key = await app.apiKeys.verify(secret, request.ip);
  if (!key) {
    // Every 401 of the API names Basic, so that a BI tool's credential dialog offers it.
    reply.header('www-authenticate', BASIC_CHALLENGE);
    app.metrics.authFailures.inc();
    const retryAfter = await app.rateLimits.recordAuthFailure(request.ip);
    if (retryAfter !== null) {
      app.metrics.rateLimited.inc({ limit: 'auth-failure' });
      return sendTooManyRequests(reply, retryAfter);
    }
    throw refusal(request);
  }
  request.apiKey = key;
}

/**
 * The address step of the pipeline: a key with an address allowlist is refused (403) from
 * any other client address — the socket's, or X-Forwarded-For's from a proxy TRUST_PROXY
 * names. Before the quota: a key cannot be spent from where it may not be used.
 */
export function checkAddress(request: FastifyRequest): void {
  const ranges = request.apiKey?.addressRanges;
  if (ranges && !addressInRanges(request.ip, ranges)) throw addressRefused();
}

/** What the authenticated key may read; only for routes in the API scope. */
export function readScopeOf(request: FastifyRequest): ReadScope {
  if (!request.apiKey) throw new Error('readScopeOf called outside the authenticated API scope');
  return request.apiKey;
}

export interface AuthenticationOptions {
  /** The clock key expiry is compared with (ms since the epoch); tests set their own. */
  now?: () => number;
  /** The clock of the verifier's confirmation window (performance.now() when absent). */
  monotonic?: () => number;
}

export default fp<AuthenticationOptions>(
  async (app, options) => {
    const lookups = app.metrics.apiKeyLookups;
    const verifier = new ApiKeyVerifier(app.db, app.dialect, {
      ...(options.now && { now: options.now }),
      ...(options.monotonic && { monotonic: options.monotonic }),
      onLookup: () => lookups.inc(),
      onError: (error, what) =>
        what === 'last-used'
          ? app.log.error({ err: error }, 'could not record API key last-used times')
          : app.log.warn(
              { err: error },
              `cannot confirm API keys: each answer is used for at most ${UNCONFIRMED_MS / 1000} s until the database answers again`,
            ),
    });
    app.decorate('apiKeys', verifier);
    app.decorateRequest('apiKey', null);
    app.addHook('onReady', () => verifier.start());
    // Registered before the database plugin's onClose runs, so pending writes land.
    app.addHook('preClose', () => verifier.close());
  },
  { name: 'authentication', dependencies: ['database', 'rate-limit', 'metrics'] },
);
