// Currency codes and names come from the runtime's ICU data through Intl: no table of
// our own to keep up to date.
const CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
const NAMES = new Intl.DisplayNames(['en'], { type: 'currency', fallback: 'code' });

/** True for a current ISO 4217 code, upper case (e.g. `EUR`). */
export function isCurrencyCode(code: string): boolean {
  return CODES.has(code);
}

/** The English name of a currency, e.g. `Euro` for `EUR`. */
export function currencyName(code: string): string {
  return NAMES.of(code) ?? code;
}
