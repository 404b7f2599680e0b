// The Node ceiling of the API benchmark: a bare node:http server that answers each
// benchmarked URL with the exact answer compplan sent for it (status, headers, body),
// doing no other work. bench/run.ts captures those answers from the real server over
// HTTP, writes them to the file named by argv[2], and spawns
// `node bench/ceiling.js FILE PORT` (plain JavaScript: no tsx loader in the process).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * @typedef {{ url: string, status: number, headers: string[], body: string }} Captured
 *   one answer as bench/run.ts captured it: raw header pairs, flat; the body in base64
 */

const [file, port] = process.argv.slice(2);
/** @type {Captured[]} */
const captured = JSON.parse(readFileSync(file ?? '', 'utf8'));
const answers = new Map(
  captured.map((answer) => [answer.url, { ...answer, bytes: Buffer.from(answer.body, 'base64') }]),
);

const server = createServer((request, response) => {
  const answer = answers.get(request.url ?? '');
  if (!answer) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(answer.status, answer.headers);
  response.end(answer.bytes);
});
// As compplan's server: keep-alive sockets stay open for the run.
server.keepAliveTimeout = 72_000;
server.listen(Number(port), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
