// The Node ceiling of the API benchmark: a bare node:http server that answers each
// benchmarked URL with the exact bytes compplan sent for it (status, headers but Date,
// body), doing no other work. bench/run.ts captures those answers from the real server,
// writes them to the file named by argv[2], and spawns
// `node bench/ceiling.js FILE PORT` (plain JavaScript, like bench/server.js: no tsx).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * @typedef {{
 *   url: string, acceptEncoding: string, status: number, headers: Record<string, string>,
 *   body: string
 * }} CapturedResponse what bench/run.ts captured of one answer (body in base64), and the
 *   Accept-Encoding it asked with ('identity': none)
 */

const [file, port] = process.argv.slice(2);
/** @type {CapturedResponse[]} */
const captured = JSON.parse(readFileSync(file ?? '', 'utf8'));
// The same URL is benchmarked plain and compressed: told apart by Accept-Encoding alone,
// a lookup in one Map, as compplan's own cache does.
/** @param {string | undefined} acceptEncoding @param {string | undefined} url */
const keyOf = (acceptEncoding, url) => `${acceptEncoding ?? 'identity'} ${url ?? ''}`;
const answers = new Map(
  captured.map((response) => [
    keyOf(response.acceptEncoding, response.url),
    { ...response, bytes: Buffer.from(response.body, 'base64') },
  ]),
);

const server = createServer((request, response) => {
  const answer = answers.get(keyOf(request.headers['accept-encoding'], request.url));
  if (!answer) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(answer.status, answer.headers);
  response.end(answer.bytes);
});
// As compplan's server: keep-alive sockets stay open for the run.
server.keepAliveTimeout = 72_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
