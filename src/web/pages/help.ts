// The help pages compplan serves itself, open to anyone: the import format for someone with
// a spreadsheet (help.views.ts), which every problem of a check links.
import type { Page } from '../context.js';
import { sendPage } from '../http.js';
import { PAGES, routeOf } from '../paths.js';
import { importHelpPage } from './help.views.js';

export const helpPages: Page = (app, context) => {
  app.get(routeOf(PAGES.importHelp), context.open, async (_request, reply) =>
    sendPage(reply, 200, importHelpPage()),
  );
};
