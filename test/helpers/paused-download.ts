// A bulk download whose reading a test controls (test/api/bulk-streaming.test.ts,
// test/cli/bulk-shutdown.test.ts): started over node:http and paused after its first
// chunk, so that the server meets a client that has stopped reading.
import { once } from 'node:events';
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';

export interface PausedDownload {
  request: ClientRequest;
  response: IncomingMessage;
  /** Reads on to the end: the whole body, or how the response was cut off. */
  rest(): Promise<{ body: string } | { error: string }>;
}

export async function pausedDownload(
  url: string,
  headers: Record<string, string>,
): Promise<PausedDownload> {
  // A connection of its own (no keep-alive agent): a socket an earlier download read in
  // full has kernel buffers grown to tens of megabytes, which would take in a whole cycle
  // before the server meets a client that does not read.
  const request = httpRequest(url, { headers, agent: false });
  request.end();
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
  const chunks: Buffer[] = [];
  const [first] = (await once(response, 'data')) as [Buffer];
  response.pause();
  chunks.push(first);
  return {
    request,
    response,
    rest: () =>
      new Promise((resolve) => {
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => resolve({ body: Buffer.concat(chunks).toString('utf8') }));
        response.once('error', (error) => resolve({ error: error.message }));
        response.once('aborted', () => resolve({ error: 'aborted' }));
        response.resume();
      }),
  };
}
