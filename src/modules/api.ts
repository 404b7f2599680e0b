// The API as its users know it (docs/api-behaviour.md, "Endpoints"). Every route registered
// here is marked as the API's: the request pipeline (src/http/pipeline.ts) then requires a
// valid key for it, counts it against that key's quota, tags its answers and may keep them.
import type { FastifyPluginAsync } from 'fastify';
import { bulkRoutes } from './bulk/routes.js';
import { type DeltaRoutesOptions, deltaRoutes } from './deltas/routes.js';
import { employeeRoutes } from './employees/routes.js';
import { meritCycleRoutes } from './merit-cycles/routes.js';
import { pingRoutes } from './ping/routes.js';

export const apiRoutes: FastifyPluginAsync<DeltaRoutesOptions> = async (api, options) => {
  api.addHook('onRoute', (route) => {
    route.config = { ...route.config, api: true };
  });
  await api.register(pingRoutes);
  await api.register(meritCycleRoutes);
  await api.register(employeeRoutes);
  await api.register(deltaRoutes, options);
  await api.register(bulkRoutes);
};
