import { ManagementError } from '../errors.js';

/** A key management request that is refused: one line, and nothing was changed. */
export class KeyManagementError extends ManagementError {
  override name = 'KeyManagementError';
}
