// The ceiling of the bulk download benchmark: a bare node:http server streaming a file of
// the bytes compplan sent (bench/bulk.ts captured them), doing no other work.
// `node bench/bulk-ceiling.js DIR PORT` serves DIR/cycle.ndjson and DIR/cycle.csv.
import { createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream';

const [dir, port] = process.argv.slice(2);
const TYPES = {
  '/cycle.ndjson': 'application/x-ndjson; charset=utf-8',
  '/cycle.csv': 'text/csv; charset=utf-8; header=present',
};

const server = createServer((request, response) => {
  const type = TYPES[request.url ?? ''];
  if (!type) {
    response.writeHead(request.url === '/healthz' ? 200 : 404).end();
    return;
  }
  response.writeHead(200, { 'content-type': type });
  pipeline(createReadStream(join(dir ?? '', request.url ?? '')), response, () => undefined);
});
server.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
