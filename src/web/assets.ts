// The web application's assets, made of the files of static/ and served by compplan itself
// (no CDN, no web fonts): one stylesheet (theme.css — compplan's colours, fonts and mark,
// shared with /docs — then app.css), app.js and icon.svg. Each is read once, when first asked
// for, and served from memory under a name with its content's hash, cached for a year: a
// changed file gets a new name.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';

// src/web/static beside this module (tsx, the tests) and dist/web/static in the build
// (scripts/bundle-cli.js copies it there); the command line's bundle, one folder beside
// dist/web in dist/cli-bundle, finds the same folder by the same path.
const STATIC_DIR = new URL('../web/static/', import.meta.url);

/** A file of static/, as text. */
export function staticFile(name: string): string {
  return readFileSync(new URL(name, STATIC_DIR), 'utf8');
}

export interface Asset {
  /** The URL path, with a content hash so that a changed file is fetched anew. */
  readonly path: string;
  readonly type: string;
  readonly body: string;
  readonly etag: string;
}

/** `name`: the served name, with its extension; `files`: what it holds, in this order. */
function asset(name: string, type: string, files: string[] = [name]): Asset {
  const body = files.map(staticFile).join('\n');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const dot = name.lastIndexOf('.');
  return {
    path: `/app/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`,
    type,
    body,
    etag: `"${hash}"`,
  };
}

let assets: { css: Asset; js: Asset; icon: Asset } | undefined;

/** The assets the layout links. */
export function webAssets() {
  assets ??= {
    // One stylesheet: compplan's theme (shared with /docs), then the pages' own.
    css: asset('app.css', 'text/css; charset=utf-8', ['theme.css', 'app.css']),
    js: asset('app.js', 'text/javascript; charset=utf-8'),
    icon: asset('icon.svg', 'image/svg+xml'),
  };
  return assets;
}

/** The assets' routes, in the web application's scope (/app): cached for a year. */
export function serveAssets(app: FastifyInstance, options: RouteShorthandOptions): void {
  for (const asset of Object.values(webAssets())) {
    app.get(asset.path.slice('/app'.length), options, async (request, reply) => {
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }
}
