// The structured JSON logger (pino), shared by the app and the process around it.
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

export function createLogger(
  config: Pick<Config, 'logLevel'>,
  stream?: NodeJS.WritableStream,
): Logger {
  return pino(
    {
      level: config.logLevel,
      // Secrets never reach a log line, whatever a serializer is later asked to print.
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '[redacted]',
      },
    },
    stream ?? process.stdout,
  );
}
