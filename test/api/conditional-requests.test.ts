// ETag / If-None-Match with the quota counted in this process, on every database
// (test/helpers/conditional-requests.ts); test/redis runs the same with the quota in Redis.
import { conditionalRequestsSuite } from '../helpers/conditional-requests.js';

conditionalRequestsSuite(
  'conditional requests: ETag and If-None-Match (in-process quota)',
  undefined,
);
