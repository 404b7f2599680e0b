// What an uploaded file looks like, read from its first bytes rather than from its name or
// the form's choice (decisions §11, "What a person sees"): a data set in JSON or NDJSON
// starts with `{` or `[`; a CSV file's first line is a header of names separated by `,`,
// `;` or tab; an Excel workbook is a zip file (`PK\x03\x04`). Anything else is left to the
// import to report (which tells a workbook's zip from other zips, and an encrypted one).
import { open } from 'node:fs/promises';

export type ContentKind = 'data-set' | 'csv' | 'workbook';

const HEAD_BYTES = 4096;

/** What the file's content looks like; undefined when it looks like neither. */
export async function contentKindOf(path: string): Promise<ContentKind | undefined> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
    return contentKindOfHead(head.subarray(0, bytesRead).toString('latin1'));
  } finally {
    await file.close();
  }
}

/** The same, for the file's first characters. */
export function contentKindOfHead(head: string): ContentKind | undefined {
  if (head.startsWith('PK\u0003\u0004')) return 'workbook';
  // A byte order mark as UTF-8 reads it in latin1, or as text.
  const text = head.replace(/^(\u00EF\u00BB\u00BF|\uFEFF)/, '').trimStart();
  if (text.startsWith('{') || text.startsWith('[')) return 'data-set';
  const firstLine = text.split(/\r?\n|\r/, 1)[0] ?? '';
  return /[,;\t]/.test(firstLine) ? 'csv' : undefined;
}
