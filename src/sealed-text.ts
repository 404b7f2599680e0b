// Text sealed with AES-256-GCM under a 32-byte key: what is kept on the server but must
// not be readable, or alterable unnoticed, by whoever reads the rows it is stored in (a
// session's one-time view, a webhook endpoint's signing secret).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const FORMAT = 'v1';

/** `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function seal(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [FORMAT, iv, cipher.getAuthTag(), sealed]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The plain text, or undefined when it was sealed under another key or altered. */
export function unseal(key: Buffer, text: string): string | undefined {
  const [format, iv, tag, sealed] = text.split('.');
  if (format !== FORMAT || !iv || !tag || sealed === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(sealed, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return undefined;
  }
}
