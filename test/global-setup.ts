// Starts the services a vitest project needs (PROJECT_NEEDS, test/helpers/projects.ts),
// once per project and only for the projects that run: a throwaway PostgreSQL cluster for
// `postgres` and `production`, a throwaway redis-server for `redis` (the production tests
// start their own, to stop and restart it), or the servers named by
// COMPPLAN_TEST_POSTGRES_URL / COMPPLAN_TEST_REDIS_URL. A `sqlite`, `web` or `bench` run
// starts nothing. vitest.config.ts adds a project only when what it needs is there.
import type { TestProject } from 'vitest/node';
import { PROJECT_NEEDS, type ProjectName } from './helpers/projects.js';
import { type PostgresCluster, startPostgres } from './helpers/services/postgres.js';
import { type RedisServer, startRedis } from './helpers/services/redis.js';

export default async function setup(project: TestProject) {
  const needs = PROJECT_NEEDS[project.name as ProjectName] ?? [];
  let postgres: PostgresCluster | undefined;
  let redis: RedisServer | undefined;
  let postgresUrl: string | undefined;
  let redisUrl: string | undefined;
  if (needs.includes('postgres')) {
    postgresUrl = process.env.COMPPLAN_TEST_POSTGRES_URL;
    if (!postgresUrl) {
      postgres = await startPostgres();
      postgresUrl = postgres.url;
    }
  }
  if (project.name === 'redis') {
    redisUrl = process.env.COMPPLAN_TEST_REDIS_URL;
    if (!redisUrl) {
      redis = await startRedis();
      redisUrl = redis.url;
    }
  }
  project.provide('postgresUrl', postgresUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    await redis?.stop();
    await postgres?.destroy();
  };
}
