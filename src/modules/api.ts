// The API as its users know it (api.md section 4): every route here needs a valid key,
// and every request with one counts against that key's quota.
import type { FastifyPluginAsync } from 'fastify';
import { conditionalGet } from '../http/etag.js';
import { cacheAnswers } from '../http/response-cache.js';
import { requireApiKey } from '../plugins/authentication.js';
import { limitInFlightPerKey } from '../rate-limit/concurrency.js';
import { employeeRoutes } from './employees/routes.js';
import { meritCycleRoutes } from './merit-cycles/routes.js';
import { pingRoutes } from './ping/routes.js';

export const apiRoutes: FastifyPluginAsync = async (api) => {
  api.addHook('onRequest', requireApiKey);
  api.addHook('onRequest', limitInFlightPerKey());
  // Answers kept while the data they show is unchanged: looked up once the key and the
  // quota have passed (the hooks above); kept by an onSend hook that comes before ETag's.
  cacheAnswers(api);
  // ETag on every 200; If-None-Match → 304 without a body, which the quota does not count.
  api.addHook('onSend', conditionalGet);
  await api.register(pingRoutes);
  await api.register(meritCycleRoutes);
  await api.register(employeeRoutes);
};
