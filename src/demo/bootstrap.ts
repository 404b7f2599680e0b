// `npm start` on a new database: load the demo data set and make a key, so that a new
// user has something to call at once.

import { type CreatedApiKey, createApiKey } from '../api-keys/service.js';
import type { DatabaseHandle } from '../db/connect.js';
import { importDataSet } from '../import/load.js';
import { findOrganizationBySlug } from '../tenancy/organizations.js';
import { demoDataSet } from './data-set.js';
import { DEMO_ORGANIZATION } from './organization.js';

/** Loads the demo data when it is not there yet; returns the key made for it then. */
export async function bootstrapDemo(database: DatabaseHandle): Promise<CreatedApiKey | undefined> {
  if (await findOrganizationBySlug(database.db, DEMO_ORGANIZATION)) return undefined;
  await importDataSet(database, demoDataSet());
  return createApiKey(database.db, { org: DEMO_ORGANIZATION, name: 'Demo key' });
}
