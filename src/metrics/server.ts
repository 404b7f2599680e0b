// The Prometheus scrape endpoint, on its own port (METRICS_PORT): metrics describe the
// deployment, not a tenant's data, so they are kept off the API port and its keys.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export async function listenForMetrics(
  registry: Registry,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: scrape /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => response.writeHead(500).end(),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
