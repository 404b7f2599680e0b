// The compplan server the API benchmark drives (bench/run.ts spawns it as
// `node bench/server.js`): the built app (dist/: the code `compplan serve` runs from its
// bundle, dist/cli-bundle/), configured from the environment like the real server, on
// 127.0.0.1. Plain JavaScript, so that it runs without tsx: tsx's loader thread would add
// its own heap to the memory measured.
//
// BENCH_LIMITER=off and BENCH_CACHE=off are the benchmark's own switches, and exist only
// here. The first replaces the key quota by one that takes nothing and sets no headers,
// so that "limiter on" minus "limiter off" is what the limiter costs. The second makes the
// data revision unknown, as while PostgreSQL cannot notify the server of imports, so that
// the response cache neither keeps nor reuses an answer: every answer is built from the
// database. Production code has no such switches.
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));
const { buildApp } = await import(dist('app.js'));
const { loadConfig } = await import(dist('config.js'));
const { openDatabase } = await import(dist('db/connect.js'));

const config = loadConfig(process.env);
const database = openDatabase(config.database);
if (process.env.BENCH_CACHE === 'off') database.revision.current = () => undefined;
const app = await buildApp({ config, database });
if (process.env.BENCH_LIMITER === 'off') {
  app.rateLimits.takeKeyQuota = async () => true;
  app.rateLimits.refundKeyQuota = async () => undefined;
}
await app.listen({ port: config.port, host: '127.0.0.1' });
process.stdout.write('listening\n');
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
