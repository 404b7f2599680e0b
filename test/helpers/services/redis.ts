// A throwaway redis-server on a free loopback port, persisting nothing.
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, run, stopProcess, waitFor } from './process.js';

export async function redisAvailable(): Promise<boolean> {
  return run('redis-server', ['--version']).then(
    () => true,
    () => false,
  );
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await waitFor(() => answersPing(port), 10_000, `redis-server on port ${port}`);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop() {
      if (child) await stopProcess(child);
      child = undefined;
    },
  };
}
