// Import text is UTF-8, strictly: a byte sequence that is not UTF-8 fails with where it
// stands (`not valid UTF-8 (line 1, column 120): byte 0xFF; …`) instead of becoming U+FFFD.
import { isUtf8 } from 'node:buffer';
import { fileProblem, whereIn } from './errors.js';

export const withoutBom = (text: string) => (text.startsWith('\uFEFF') ? text.slice(1) : text);

/**
 * Text from strict UTF-8: of a whole file, or of one line of it (`firstLine`: its number,
 * for the message). `atEnd`: the bytes end the file, so a character cut short there is one
 * the file ends inside of.
 */
export function decodeStrictly(bytes: Uint8Array, firstLine = 1, atEnd = true): string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString();
  // Where: the first U+FFFD of the lenient decoding that stands for other bytes.
  const text = new TextDecoder().decode(bytes);
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf('\ufffd'); at !== -1; at = text.indexOf('\ufffd', at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at));
    from = at + 1;
    if (bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd) {
      offset += 3;
      continue;
    }
    // A sequence cut short only by the end of the file is a valid start of one.
    let cut = false;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(offset), { stream: true });
      cut = atEnd;
    } catch {}
    const what = cut
      ? 'the file ends inside a character'
      : `byte 0x${(bytes[offset] as number).toString(16).toUpperCase().padStart(2, '0')}`;
    throw fileProblem(
      `not valid UTF-8 (${whereIn(text, at, firstLine)}): ${what}; save the file as UTF-8`,
    );
  }
  throw new Error('isUtf8 and TextDecoder disagree');
}
