// The structured JSON logger (pino), shared by the app and the process around it.
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

const KEY_IN_URL = /cpk_[0-9A-Za-z]{4,}/g;

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** What a request line logs (Fastify's own fields), with key-shaped text masked. */
function requestLine(request: LoggedRequest) {
  return {
    method: request.method,
    url: request.url?.replace(KEY_IN_URL, 'cpk_[redacted]'),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

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
      // A key pasted into a URL by mistake (?x-api-key=cpk_…) must not reach the log either:
      // request lines carry the URL, so anything shaped like a key is masked in it.
      serializers: { req: requestLine },
    },
    // Standard output written asynchronously (pino's own SonicBoom destination): a log line
    // costs the request a buffer append, not a write system call. What is buffered is
    // written before the process exits.
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}
