// The layers of src/ (DEVELOPERS.md, "Dependency direction"), checked by `npm run lint:deps`
// (part of `npm run check`). A file imports its own layer and the layers below it, never one
// above; a file that belongs to no layer is refused too, so a new folder is placed on purpose.
// test/unit/layers.test.ts shows each rule refusing an import that breaks it.

/** Top to bottom: [name, the paths (from the repository root) that make the layer]. */
const LAYERS = [
  // Ways in: the command line, serve's start-up, the demo data set, the OpenAPI export.
  ['entry', '^src/(cli/|server[.]ts$|demo/|docs/)'],
  // The Fastify application, assembled: buildApp and the plugins it registers.
  ['app', '^src/(app[.]ts$|plugins/)'],
  // What answers a request: the API's resources (one folder each), the OData feed, the web
  // application (src/web/, or src/modules/web/).
  ['answers', '^src/(modules/|odata/|web/)'],
  // The request pipeline and its steps, and what every route uses (response schemas, ETags,
  // the authenticated key's read scope).
  ['http', '^src/(http/|metrics/|logger[.]ts$)'],
  // What the application knows, whichever way in asks.
  [
    'domain',
    '^src/((api-keys|users|sessions|columns|changes|import|audit|webhooks|export|pagination|rate-limit|currency|threads|row-slices)/|(address-ranges|sealed-text|email)[.]ts$)',
  ],
  // Organisations and what a key may read of them: the conditions every read path joins.
  ['tenancy', '^src/tenancy/'],
  ['db', '^src/db/'],
  // Import nothing of the project.
  ['leaf', '^src/(config|errors|ids|version)[.]ts$'],
];

const anyLayer = LAYERS.map(([, path]) => `(${path})`).join('|');

const upward = LAYERS.slice(1).map(([name, path], index) => ({
  name: `${name}-imports-upward`,
  comment: `${name} may import only ${LAYERS.slice(index + 2)
    .map(([below]) => below)
    .join(', ')} and itself`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(0, index + 1).map(([, above]) => `(${above})`) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'leaf-imports-project',
      comment: 'config.ts, errors.ts, ids.ts and version.ts import nothing of the project',
      severity: 'error',
      from: { path: LAYERS.at(-1)[1] },
      to: { path: '^src/' },
    },
    {
      name: 'resources-import-web',
      comment: 'the API resources and the OData feed do not import the web application',
      severity: 'error',
      from: { path: '^src/(modules/|odata/)', pathNot: '^src/modules/web/' },
      to: { path: '^src/(web/|modules/web/)' },
    },
    {
      name: 'web-imports-resources',
      comment: 'the web application does not import the API resources or the OData feed',
      severity: 'error',
      from: { path: '^src/(web/|modules/web/)' },
      to: { path: '^src/(modules/|odata/)', pathNot: '^src/modules/web/' },
    },
    {
      name: 'resources-import-feed',
      comment: 'the OData feed reads the resources; no resource imports the feed',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/odata/' },
    },
    {
      name: 'migration-imports-today',
      comment:
        'a migration is frozen in time: it imports kysely and node:* only (what it needs of ' +
        "today's code is copied into it)",
      severity: 'error',
      from: { path: '^src/db/migrations/' },
      to: { dependencyTypesNot: ['core'], pathNot: '(^|/)node_modules/kysely/' },
    },
    {
      name: 'outside-the-layers',
      comment: 'every file of src/ belongs to a layer (add a new folder to LAYERS)',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: anyLayer },
    },
    {
      name: 'no-circular',
      comment: 'no import circle, at any length',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // TypeScript 7 has no compiler API for dependency-cruiser to parse with; swc reads the
    // sources (type-only imports included), and `.js` specifiers resolve to the `.ts` files.
    parser: 'swc',
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
