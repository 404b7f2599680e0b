// Whether a file is an Excel workbook, told by its first bytes (an .xlsx is a zip file; an
// encrypted one, or an Excel 97–2003 .xls, an OLE file), without loading the workbook
// reader (xlsx.ts), so that a CSV import starts as quickly as before.
import { open } from 'node:fs/promises';

/** The largest workbook read: the web application's upload limit. */
export const XLSX_MAX_BYTES = 100 * 1024 * 1024;

/** A workbook to read: its file, or its bytes (standard input); and the sheet chosen. */
export interface WorkbookInput {
  workbook: string | Buffer;
  /** The sheet's name; absent: the first visible sheet. */
  sheet?: string | undefined;
}

export const isWorkbookInput = (value: unknown): value is WorkbookInput =>
  typeof value === 'object' &&
  value !== null &&
  !(value instanceof Uint8Array) &&
  'workbook' in value;

const ZIP = Buffer.from('PK\x03\x04', 'latin1');
const OLE = Buffer.from('d0cf11e0a1b11ae1', 'hex');

/** What a file's first bytes say it is: a zip (an .xlsx), an OLE file, or anything else. */
export function workbookKindOf(head: Uint8Array): 'zip' | 'ole' | undefined {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (bytes.subarray(0, 4).equals(ZIP)) return 'zip';
  if (bytes.subarray(0, 8).equals(OLE)) return 'ole';
  return undefined;
}

/** The first bytes of a file, to tell a workbook from a CSV file. */
export async function headOfFile(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(8);
    const { bytesRead } = await handle.read(head, 0, 8, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
