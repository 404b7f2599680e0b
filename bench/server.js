// The compplan server the API benchmark drives (bench/run.ts spawns it as
// `node bench/server.js`): the built app (dist/, what `compplan serve` runs), configured
// from the environment like the real server, on 127.0.0.1. Plain JavaScript, so that it
// runs without tsx: tsx's loader thread would add its own heap to the memory measured.
//
// BENCH_LIMITER=off is the benchmark's own switch, and exists only here: the key quota
// is replaced by one that takes nothing and sets no headers, so that "limiter on" minus
// "limiter off" is what the limiter costs. Production code has no such switch.
import { fileURLToPath } from 'node:url';

/** @param {string} path */
const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));
const { buildApp } = await import(dist('app.js'));
const { loadConfig } = await import(dist('config.js'));
const { openDatabase } = await import(dist('db/connect.js'));

const config = loadConfig(process.env);
const database = openDatabase(config.database);
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
