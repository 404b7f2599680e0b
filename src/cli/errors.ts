// How a command's failure reaches the user: one line on standard error and an exit code
// that says whether the command could not do its work or was called wrongly.

/** Exit codes: 1 when the command could not do its work, 2 when it was called wrongly. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure to report as it is, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}
