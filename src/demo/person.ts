// A person of the demo data set: made by data-set.ts, paid by compensation.ts.
export interface Person {
  firstName: string;
  lastName: string;
  preferredName: string | null;
  email: string;
  currency: string;
  department: string;
  jobTitle: string;
  level: number;
}
