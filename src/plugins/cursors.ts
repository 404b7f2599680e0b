// The cursor codec, keyed with the signing secret that a migration stored in the
// database, so that every instance of a deployment reads every other's cursors.
import fp from 'fastify-plugin';
import { CursorCodec } from '../pagination/cursor.js';

declare module 'fastify' {
  interface FastifyInstance {
    cursors: CursorCodec;
  }
}

export default fp(
  async (app) => {
    const secret = await app.db
      .selectFrom('server_secrets')
      .select('value')
      .where('name', '=', 'cursor-signing-key')
      .executeTakeFirstOrThrow();
    app.decorate('cursors', new CursorCodec(Buffer.from(secret.value, 'base64url')));
  },
  { name: 'cursors', dependencies: ['database'] },
);
