// `compplan export employees` in one request: the bulk download (docs/bulk-download.md),
// whose CSV with `shape=nested` is the export's layout and whose NDJSON lines are the
// export's NDJSON lines (JSON: the same texts in an array). The bytes are written as they arrive, in
// pieces of about 1 MiB, each recorded in the state file like a page; an interrupted
// download has no place to continue from, so `--resume` starts it again.
import { type CompplanClient, NotFoundError } from '@compplan/client';

/** What the export needs of its output here (export.ts's sink and state). */
export interface BulkTarget {
  write(text: string): Promise<void>;
  /** Told of the rows written so far. */
  progress(rows: number): void;
}

// Bytes gathered before they are written (and the state file saved once).
const WRITE_BYTES = 1024 * 1024;

/**
 * Downloads the cycle's employees in the export's format to `target`; false, having
 * written nothing, when the server has no bulk download (an older server answers 404:
 * the caller pages through the list instead, where an unknown cycle is a 404 too).
 */
export async function exportInOneDownload(
  client: CompplanClient,
  cycle: string,
  format: 'csv' | 'ndjson' | 'json',
  bom: boolean,
  target: BulkTarget,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let stream: ReadableStream<Uint8Array>;
  try {
    stream = await client.employees
      .bulk(cycle, {
        format: format === 'csv' ? 'csv' : 'ndjson',
        // The export's CSV layout, which the CSV import reads back (NDJSON's default).
        ...(format === 'csv' ? { shape: 'nested' as const } : {}),
        bom,
        signal,
      })
      .stream();
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
  const rows = format === 'csv' ? csvRecordCounter() : lineCounter();
  // The byte order mark the server put before CSV is the export's: kept.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pending = '';
  let written = 0;
  const flush = async () => {
    const text = format === 'json' ? asJsonArrayItems(pending, written) : pending;
    written = rows.count();
    pending = '';
    await target.write(text);
    target.progress(written);
  };
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true });
    rows.add(text);
    pending += text;
    // JSON needs whole lines: the array's commas go between them.
    if (pending.length >= WRITE_BYTES && (format !== 'json' || pending.endsWith('\n'))) {
      await flush();
    }
  }
  pending += decoder.decode();
  if (pending !== '') await flush();
  return true;
}

/** NDJSON lines (each ending in \n) as the items of the export's JSON array. */
function asJsonArrayItems(lines: string, before: number): string {
  return lines
    .slice(0, -1)
    .split('\n')
    .map((line, index) => `${before + index === 0 ? '' : ',\n'}${line}`)
    .join('');
}

interface RowCounter {
  add(text: string): void;
  count(): number;
}

/** NDJSON: a row per line end. */
function lineCounter(): RowCounter {
  let lines = 0;
  return {
    add(text) {
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
    },
    count: () => lines,
  };
}

/** CSV: a record per line end outside quotes, the header not counted. */
function csvRecordCounter(): RowCounter {
  let records = 0;
  let quoted = false;
  return {
    add(text) {
      for (let at = 0; at < text.length; at++) {
        const code = text.charCodeAt(at);
        if (code === 0x22) quoted = !quoted;
        else if (code === 0x0a && !quoted) records++;
      }
    },
    count: () => Math.max(0, records - 1),
  };
}
