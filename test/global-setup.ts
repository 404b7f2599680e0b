// Starts the services the suite is given: a throwaway PostgreSQL cluster and Redis when
// their binaries are installed (CI installs them), or the servers named by
// COMPPLAN_TEST_POSTGRES_URL / COMPPLAN_TEST_REDIS_URL. vitest.config.ts adds the
// postgres project only when PostgreSQL is there.
import type { TestProject } from 'vitest/node';
import {
  type PostgresCluster,
  postgresAvailable,
  startPostgres,
} from './helpers/services/postgres.js';
import { type RedisServer, redisAvailable, startRedis } from './helpers/services/redis.js';

export default async function setup(project: TestProject) {
  let postgres: PostgresCluster | undefined;
  let redis: RedisServer | undefined;
  let postgresUrl = process.env.COMPPLAN_TEST_POSTGRES_URL;
  let redisUrl = process.env.COMPPLAN_TEST_REDIS_URL;
  if (!postgresUrl && postgresAvailable()) {
    postgres = await startPostgres();
    postgresUrl = postgres.url;
  }
  if (!redisUrl && (await redisAvailable())) {
    redis = await startRedis();
    redisUrl = redis.url;
  }
  project.provide('postgresUrl', postgresUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    await redis?.stop();
    await postgres?.destroy();
  };
}
