// The API reference at /docs (src/plugins/docs-page.ts): a bar above Swagger UI that leads
// back to the web application, with compplan's mark (the markup of src/web/layout.ts's
// brand()). Runs after Swagger UI's own scripts; nothing from the document is put into it.

(() => {
  const bar = document.createElement('header');
  bar.className = 'docs-bar';
  bar.innerHTML =
    '<a class="docs-home" href="/app" title="The compplan web application"><span class="brand"><span class="brand-mark" aria-hidden="true">cp</span>compplan</span></a>\n' +
    '<span class="docs-page-name">API reference</span>\n' +
    '<nav class="docs-links" aria-label="compplan"><a href="/app">Web application</a><a href="/openapi.json">OpenAPI document</a></nav>';
  document.body.prepend(bar);
})();
