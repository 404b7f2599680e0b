// The compplan server the API benchmark drives (bench/run.ts spawns it as
// `node --import tsx bench/server.ts`): the built app (dist/, what `compplan serve` runs),
// configured from the environment like the real server, on 127.0.0.1.
//
// BENCH_LIMITER=off is the benchmark's own switch, and exists only here: the key quota
// is replaced by one that takes nothing and sets no headers, so that "limiter on" minus
// "limiter off" is what the limiter costs. Production code has no such switch.
import { fileURLToPath } from 'node:url';

type AppModule = typeof import('../src/app.js');
type ConfigModule = typeof import('../src/config.js');
type ConnectModule = typeof import('../src/db/connect.js');

const dist = (path: string) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));
const { buildApp } = (await import(dist('app.js'))) as AppModule;
const { loadConfig } = (await import(dist('config.js'))) as ConfigModule;
const { openDatabase } = (await import(dist('db/connect.js'))) as ConnectModule;

const config = loadConfig(process.env);
const database = openDatabase(config.database);
const app = await buildApp({ config, database });
if (process.env.BENCH_LIMITER === 'off') {
  app.rateLimits.takeKeyQuota = async () => true;
  app.rateLimits.refundKeyQuota = async () => undefined;
}
await app.listen({ port: config.port, host: '127.0.0.1' });
process.stdout.write('listening\n');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
