// Import rules between packages and between the backend's domain folders, checked by
// `npm run lint` (depcruise over the packages' src/; tests may run an agent against a backend). Type-only
// imports count: a cycle of types is still a tangle to read.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-backend-folder-cycle',
      comment:
        'Backend folders form layers: common and config at the bottom, domains above, ingest and the ' +
        'app module on top. A folder that imports one that imports it back is a tangle: move the shared ' +
        'piece down (common/, or the lower domain), or let the lower side be called through an interface.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^backend/src/' },
      to: { circular: true },
    },
    {
      name: 'no-file-cycle',
      comment: 'Files that import each other, in any package.',
      severity: 'error',
      from: { path: '^(shared|agent|backend|dashboard)/src/' },
      to: { circular: true },
    },
    {
      name: 'no-domain-in-common',
      comment: 'backend/src/common holds generic helpers: it imports no domain (register with it instead).',
      severity: 'error',
      from: { path: '^backend/src/(common|config)/' },
      to: { path: '^backend/src/', pathNot: '^backend/src/(common|config)/' },
    },
    {
      name: 'migrations-are-frozen',
      comment:
        'A migration does what it did when it was written: it imports no live code of the backend or of ' +
        '@spectator/shared, which a later change would change under it. Copy what it needs into it (a frozen ' +
        'copy). Shared constants are no exception: a list that grows (an environment kind, a step) would ' +
        "rewrite an old migration's CHECK; a new migration replaces the constraint instead, and " +
        'backend/test/lifecycle-constraints.test.ts holds the database to the shared lists.',
      severity: 'error',
      from: { path: '^backend/src/database/migrations/' },
      to: { path: '^(backend|shared|agent|dashboard)/', pathNot: '^backend/src/database/migrations/' },
    },
    {
      name: 'shared-is-pure',
      comment: '@spectator/shared is pure TypeScript (the dashboard uses it too): no Node built-ins.',
      severity: 'error',
      from: { path: '^shared/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'shared-imports-no-package',
      comment: '@spectator/shared is the bottom: it imports no other workspace package.',
      severity: 'error',
      from: { path: '^shared/src/' },
      to: { path: '^(agent|backend|dashboard)/' },
    },
    {
      name: 'agent-and-backend-apart',
      comment: 'The agent and the backend meet only on the wire (shared protocol types).',
      severity: 'error',
      from: { path: '^agent/src/' },
      to: { path: '^backend/' },
    },
    {
      name: 'backend-and-agent-apart',
      comment: 'The agent and the backend meet only on the wire (shared protocol types).',
      severity: 'error',
      from: { path: '^backend/src/' },
      to: { path: '^agent/' },
    },
    {
      name: 'dashboard-shares-only-wire-types',
      comment: 'The dashboard imports @spectator/shared only, never the agent or the backend.',
      severity: 'error',
      from: { path: '^dashboard/src/' },
      to: { path: '^(agent|backend)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|coverage)/' },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
