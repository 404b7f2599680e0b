// Whether this machine can run the production tests (test/production): PostgreSQL (the
// suite's throwaway cluster, or COMPPLAN_TEST_POSTGRES_URL), redis-server and nginx. Checked
// the way vitest.config.ts checks PostgreSQL: the binaries exist. CI installs all three.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { nginxAvailable } from './nginx.js';
import { postgresAvailable } from './postgres.js';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .some((dir) => dir.length > 0 && existsSync(join(dir, command)));
}

export function productionStackAvailable(): boolean {
  const postgres = Boolean(process.env.COMPPLAN_TEST_POSTGRES_URL) || postgresAvailable();
  return postgres && onPath('redis-server') && nginxAvailable();
}
