/** A key management request that is refused: one line, and nothing was changed. */
export class KeyManagementError extends Error {
  override name = 'KeyManagementError';
}
