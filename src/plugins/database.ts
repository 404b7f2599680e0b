// Hands the opened database to the routes and closes it with the app.
import fp from 'fastify-plugin';
import type { DatabaseHandle, Db, Dialect } from '../db/connect.js';

declare module 'fastify' {
  interface FastifyInstance {
    database: DatabaseHandle;
    db: Db;
    dialect: Dialect;
  }
}

export default fp<{ database: DatabaseHandle }>(
  async (app, { database }) => {
    app.decorate('database', database);
    app.decorate('db', database.db);
    app.decorate('dialect', database.dialect);
    app.addHook('onClose', async () => {
      await database.close();
    });
  },
  { name: 'database' },
);
