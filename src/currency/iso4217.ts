// Currency codes and names come from the runtime's ICU data through Intl: no table of
// our own to keep up to date.
const CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
const NAMES = new Intl.DisplayNames(['en'], { type: 'currency', fallback: 'code' });

/** True for a current ISO 4217 code, upper case (e.g. `EUR`). */
export function isCurrencyCode(code: string): boolean {
  return CODES.has(code);
}

// Names asked for once per code: an import asks for one per employee, and Intl's lookup
// (about 2 µs) was a tenth of validating one. At most the few hundred ISO 4217 codes.
const NAME_OF = new Map<string, string>();

/** The English name of a currency, e.g. `Euro` for `EUR`. */
export function currencyName(code: string): string {
  let name = NAME_OF.get(code);
  if (name === undefined) {
    name = NAMES.of(code) ?? code;
    if (CODES.has(code)) NAME_OF.set(code, name);
  }
  return name;
}
