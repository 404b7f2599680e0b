// The web application's pages by address: the one list that the navigation, the redirects
// and each page's routes read, so that a page links to another without importing it.
export const PAGES = {
  signIn: '/app/sign-in',
  password: '/app/password',
  signOut: '/app/sign-out',
  connections: '/app/settings/connections',
  webhooks: '/app/settings/connections/webhooks',
  roles: '/app/settings/roles',
  users: '/app/settings/users',
  data: '/app/settings/data',
  auditLog: '/app/settings/audit-log',
  importHelp: '/app/help/import',
} as const;

/** A page's URL as its routes register it (the web application is mounted at /app). */
export const routeOf = (page: string) => page.slice('/app'.length);

/** The query flag of a page reached because its form had been sent already. */
export const RESENT = 'resent';
