// A throwaway nginx in a temp dir, on a free loopback port, running deploy/nginx.conf —
// the very file operators install — with only what differs per deployment replaced: the
// instances, the `listen` address and the access log path. Around it, a minimal main
// configuration plays the part of a distribution's /etc/nginx/nginx.conf (one worker,
// every temp path inside the temp dir). As root, the worker runs as nginx's default user
// (nobody), so the temp dir is made traversable.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../cli.js';
import { freePort, stopProcess } from './process.js';

export const NGINX_BIN = process.env.COMPPLAN_NGINX_BIN ?? '/usr/sbin/nginx';
export const NGINX_SITE = join(REPO_ROOT, 'deploy', 'nginx.conf');

export function nginxAvailable(): boolean {
  return existsSync(NGINX_BIN);
}

export interface NginxSiteSettings {
  /** The `listen` parameter, e.g. 127.0.0.1:41234. */
  listen: string;
  /** host:port of each instance; each line keeps the options of the file's first one. */
  instances: readonly string[];
  accessLog: string;
}

const INSTANCES =
  /^([ \t]*)# compplan instances: begin\n([\s\S]*?)^[ \t]*# compplan instances: end$/gm;
const INSTANCE_LINE = /^[ \t]*server[ \t]+\S+([^;\n]*);/m;
const LISTEN = /^([ \t]*)listen[ \t]+[^;\n]+;/gm;
const ACCESS_LOG = /^([ \t]*)access_log[ \t]+(\S+)([^;\n]*);/gm;

function onlyMatch(source: string, pattern: RegExp, what: string): RegExpExecArray {
  const matches = [...source.matchAll(pattern)];
  const match = matches[0];
  if (matches.length !== 1 || !match) {
    throw new Error(`deploy/nginx.conf must have exactly one ${what}; found ${matches.length}`);
  }
  return match as RegExpExecArray;
}

/** deploy/nginx.conf's text with the deployment-specific values replaced. */
export function renderNginxSite(source: string, settings: NginxSiteSettings): string {
  const block = onlyMatch(source, INSTANCES, 'block of compplan instances between the markers');
  const [whole, indent = '', lines = ''] = block;
  const options = INSTANCE_LINE.exec(lines)?.[1];
  if (options === undefined) throw new Error('deploy/nginx.conf lists no compplan instance');
  const instances = settings.instances.map((address) => `${indent}server ${address}${options};`);
  const listen = onlyMatch(source, LISTEN, '`listen` line');
  const accessLog = onlyMatch(source, ACCESS_LOG, '`access_log` line');
  // Replacement functions, so that nothing in a value is read as a `$` pattern.
  return source
    .replace(whole, () =>
      [
        `${indent}# compplan instances: begin`,
        ...instances,
        `${indent}# compplan instances: end`,
      ].join('\n'),
    )
    .replace(listen[0], () => `${listen[1] ?? ''}listen ${settings.listen};`)
    .replace(
      accessLog[0],
      () => `${accessLog[1] ?? ''}access_log ${settings.accessLog}${accessLog[3] ?? ''};`,
    );
}

export interface NginxServer {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly pid: number;
  /** The access log so far, one parsed JSON object a line (deploy/nginx.conf's format). */
  accessLog(): Record<string, unknown>[];
  errorLog(): string;
  /** SIGTERM (fast shutdown), then SIGKILL; removes the temp dir. */
  stop(): Promise<void>;
}

function readIfThere(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** The main configuration around the site: what a distribution's nginx.conf provides. */
function mainConfig(dir: string, site: string): string {
  return [
    'worker_processes 1;',
    `lock_file ${join(dir, 'nginx.lock')};`,
    'events { worker_connections 1024; }',
    'http {',
    '    access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `    ${kind}_temp_path ${join(dir, `${kind}_temp`)};`,
    ),
    `    include ${site};`,
    '}',
    '',
  ].join('\n');
}

const ADDRESS_IN_USE = /Address already in use/;

export async function startNginx(instances: readonly string[]): Promise<NginxServer> {
  const dir = mkdtempSync(join(tmpdir(), 'compplan-nginx-'));
  chmodSync(dir, 0o755);
  const accessLogPath = join(dir, 'access.log');
  const errorLogPath = join(dir, 'error.log');
  const site = join(dir, 'compplan.conf');
  const main = join(dir, 'nginx.conf');
  writeFileSync(main, mainConfig(dir, site));
  // nginx needs its port in the configuration: one found free a moment earlier, which
  // another process may take first; then nginx cannot bind, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    writeFileSync(
      site,
      renderNginxSite(readFileSync(NGINX_SITE, 'utf8'), {
        listen: `127.0.0.1:${port}`,
        instances,
        accessLog: accessLogPath,
      }),
    );
    const child: ChildProcess = spawn(
      NGINX_BIN,
      [
        '-p',
        `${dir}/`,
        '-c',
        main,
        '-g',
        `daemon off; pid ${join(dir, 'nginx.pid')}; error_log ${errorLogPath};`,
      ],
      // nginx keeps only TZ of its environment; the JSON error timestamps want UTC.
      { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, TZ: 'UTC' } },
    );
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not spawn ${NGINX_BIN}`);
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      await stopProcess(child);
    };
    const deadline = Date.now() + 10_000;
    // Any answer from nginx will do (not from whatever else might hold the port).
    const answers = () =>
      fetch(`${url}/healthz`).then(
        (response) => response.arrayBuffer().then(() => response.headers.get('server') === 'nginx'),
        () => false,
      );
    let started = false;
    while (!started) {
      started = await answers();
      if (started) break;
      if (child.exitCode !== null || Date.now() > deadline) break;
      await sleep(50);
    }
    if (started) {
      return {
        url,
        pid,
        accessLog: () =>
          readIfThere(accessLogPath)
            .split('\n')
            .filter((line) => line.length > 0)
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        errorLog: () => readIfThere(errorLogPath),
        async stop() {
          await stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await stop();
    const output = `${stderr}${readIfThere(errorLogPath)}`;
    if (ADDRESS_IN_USE.test(output) && attempt < 3) continue;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx did not start on port ${port} (exit code ${child.exitCode}): ${output}`);
  }
}
