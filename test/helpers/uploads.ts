// A multipart upload to Settings → Data sent by hand, as a slow or large browser upload:
// the form's token and format, then `send` bytes of file made as they are sent (never held
// whole), with a Content-Length of `declared` if given (else chunked); ended, or left open
// (a stalled upload) until `abort()`. `gapMs`: a slow line, `pieceBytes` every `gapMs`.
import { request as httpRequest } from 'node:http';

export interface SentUpload {
  /** The answer; rejects with "aborted" once aborted first. */
  answer: Promise<{ status: number; body: string }>;
  abort(): void;
}

export function sendUpload(
  url: string,
  cookie: string,
  csrf: string,
  options: { declared?: number; send: number; end: boolean; gapMs?: number; pieceBytes?: number },
): SentUpload {
  const boundary = '----compplan-test-boundary';
  const head = Buffer.from(
    [
      `--${boundary}`,
      'Content-Disposition: form-data; name="_csrf"',
      '',
      csrf,
      `--${boundary}`,
      'Content-Disposition: form-data; name="format"',
      '',
      'data-set',
      `--${boundary}`,
      'Content-Disposition: form-data; name="file"; filename="big.ndjson"',
      'Content-Type: application/octet-stream',
      '',
      '',
    ].join('\r\n'),
  );
  const request = httpRequest(url, {
    method: 'POST',
    headers: {
      cookie,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      ...(options.declared !== undefined && { 'content-length': String(options.declared) }),
    },
  });
  let aborted = false;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('error', (error) => reject(aborted ? new Error('aborted') : error));
    request.on('close', () => {
      if (aborted) reject(new Error('aborted'));
    });
  });
  const chunk = Buffer.alloc(64 * 1024, 'x\n');
  let sent = 0;
  request.write(head);
  const pieceBytes = Math.min(chunk.length, options.pieceBytes ?? chunk.length);
  const more = () => {
    while (sent < options.send && !aborted) {
      const piece = chunk.subarray(0, Math.min(pieceBytes, options.send - sent));
      sent += piece.length;
      const flowing = request.write(piece);
      if (options.gapMs !== undefined) return void setTimeout(more, options.gapMs);
      if (!flowing) return void request.once('drain', more);
    }
    if (options.end && !aborted) request.end(`\r\n--${boundary}--\r\n`);
  };
  more();
  return {
    answer,
    abort() {
      aborted = true;
      request.destroy();
    },
  };
}
