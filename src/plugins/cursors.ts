// The cursor codec, keyed with the signing secret that a migration stored in the
// database, so that every instance of a deployment reads every other's cursors.
import fp from 'fastify-plugin';
import { readServerSecret } from '../db/server-secrets.js';
import { CursorCodec } from '../pagination/cursor.js';

declare module 'fastify' {
  interface FastifyInstance {
    cursors: CursorCodec;
  }
}

export default fp(
  async (app) => {
    const key = await readServerSecret(app.db, 'cursor-signing-key');
    app.decorate('cursors', new CursorCodec(key));
  },
  { name: 'cursors', dependencies: ['database'] },
);
