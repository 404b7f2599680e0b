// The flags of the benchmark scripts (run.ts, data.ts, soak.ts): an unknown flag, a flag
// without its value, or a number that is not a whole number in range stops the script at
// once with a message that names it — not a stack trace, nor a run of minutes measuring
// NaN seconds or zero keys.
import { type ParseArgsConfig, parseArgs } from 'node:util';

function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** node:util's parseArgs, its errors printed as its message alone (exit status 2). */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    return refuse((error as Error).message);
  }
}

/**
 * The whole number `text` spells (digits only, as a flag is typed), from `min` to `max`;
 * otherwise exits with status 2 and a message that names `--flag`.
 */
export function wholeNumberFlag(
  flag: string,
  text: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = Number(text);
  if (
    text === undefined ||
    !/^\d+$/.test(text) ||
    !Number.isSafeInteger(value) ||
    value < min ||
    value > max
  ) {
    const range =
      max === Number.MAX_SAFE_INTEGER
        ? `of at least ${min.toLocaleString('en-US')}`
        : `from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}`;
    refuse(`--${flag} must be a whole number ${range}, not ${JSON.stringify(text ?? '')}`);
  }
  return value;
}

/** `text` when it is one of `choices`; otherwise exits with status 2 naming `--flag`. */
export function oneOfFlag<T extends string>(
  flag: string,
  text: string | undefined,
  choices: readonly T[],
): T {
  if (text === undefined || !(choices as readonly string[]).includes(text)) {
    refuse(`--${flag} must be ${choices.join(' or ')}, not ${JSON.stringify(text ?? '')}`);
  }
  return text as T;
}
