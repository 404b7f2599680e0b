// x-api-key authentication for the API routes (api.md section 5). The verifier and its
// cache live as long as the app; `requireApiKey` is the hook the API scope runs first.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { unauthorized } from '../errors.js';
import {
  ApiKeyVerifier,
  type AuthenticatedKey,
  UNCONFIRMED_MS,
} from '../modules/api-keys/verifier.js';
import { sendTooManyRequests } from '../rate-limit/plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyVerifier;
  }
  interface FastifyRequest {
    /** Set by requireApiKey on every request of the API scope. */
    apiKey: AuthenticatedKey | null;
  }
}

export const API_KEY_HEADER = 'x-api-key';

/** Authenticates the request, then takes one request from its key's quota. */
export async function requireApiKey(
  this: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const header = request.headers[API_KEY_HEADER];
  const key = await this.apiKeys.verify(typeof header === 'string' ? header : undefined);
  if (!key) {
    this.metrics.authFailures.inc();
    const retryAfter = await this.rateLimits.recordAuthFailure(request);
    if (retryAfter !== null) {
      this.metrics.rateLimited.inc({ limit: 'auth-failure' });
      return sendTooManyRequests(reply, retryAfter);
    }
    throw unauthorized();
  }
  request.apiKey = key;
  if (!(await this.rateLimits.takeKeyQuota(request, reply))) {
    this.metrics.rateLimited.inc({ limit: 'key' });
    return reply;
  }
}

/** The organisation of the authenticated key; only for routes in the API scope. */
export function organizationOf(request: FastifyRequest): string {
  if (!request.apiKey) throw new Error('organizationOf called outside the authenticated API scope');
  return request.apiKey.organizationId;
}

export default fp(
  async (app) => {
    const lookups = app.metrics.apiKeyLookups;
    const verifier = new ApiKeyVerifier(app.db, app.dialect, {
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
