// ETag / If-None-Match with the quota counted in Redis (test/helpers/conditional-requests.ts):
// a 304 gives its request back to the shared counter. The `redis` project runs this where
// redis-server is installed, and is reported as skipped for lack of it elsewhere (a
// failure under CI=true), never silently left out.
import { inject } from 'vitest';
import { conditionalRequestsSuite } from '../helpers/conditional-requests.js';

const redisUrl = inject('redisUrl');
if (!redisUrl) throw new Error('the redis project runs without a Redis server');
conditionalRequestsSuite('conditional requests with the quota in Redis', redisUrl);
