// An employee's stored JSON text: the bytes a page of employees serves as they are
// (repository.ts joins a page's texts in the database). Its layout is known here and
// nowhere else. The import builds each employee's text before it knows the id the
// employee keeps (a stored employee matched by email keeps its own), so it stages the text
// after the id (`storedBodyTail`) and the database puts the final id in front
// (`storedBodySql`).
import type { ImportEmployee } from './schema.js';

// `{"id":"<id>",` then the tail: the id first, and ids (mce_ and a UUID) need no escaping.
const HEAD_OF_EMPTY_ID = '{"id":"",'.length;

/** The employee in its API form, without its id: the text after `{"id":"<id>",`. */
export function storedBodyTail(employee: Omit<ImportEmployee, 'id'>): string {
  // The API's Employee (src/modules/employees/schema.ts), field for field and in its order:
  // every page of employees a test reads is checked against openapi.json.
  const body = {
    id: '',
    email: employee.email,
    firstName: employee.firstName,
    lastName: employee.lastName,
    preferredName: employee.preferredName ?? null,
    currencyCode: { code: employee.currencyCode.code, value: employee.currencyCode.value },
    eligibilityStatus: employee.eligibilityStatus,
    columns: employee.columns,
  };
  return JSON.stringify(body).slice(HEAD_OF_EMPTY_ID);
}

/** SQL of the stored text of an employee: its id (an SQL expression) and its tail's. */
export const storedBodySql = (id: string, tail: string) => `'{"id":"' || ${id} || '",' || ${tail}`;
