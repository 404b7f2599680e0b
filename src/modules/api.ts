// The API as its users know it (api.md section 4): every route here needs a valid key,
// and every request with one counts against that key's quota.
import type { FastifyPluginAsync } from 'fastify';
import { requireApiKey } from '../plugins/authentication.js';
import { employeeRoutes } from './employees/routes.js';
import { meritCycleRoutes } from './merit-cycles/routes.js';
import { pingRoutes } from './ping/routes.js';

export const apiRoutes: FastifyPluginAsync = async (api) => {
  api.addHook('onRequest', requireApiKey);
  await api.register(pingRoutes);
  await api.register(meritCycleRoutes);
  await api.register(employeeRoutes);
};
