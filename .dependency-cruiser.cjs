// The direction of imports, as rules (`npm run lint:layers`, part of `npm test` and CI). docs/ARCHITECTURE.md,
// "Where things live" and "Capabilities", draws the same picture:
//
//   devkit/                                        vendor fakes and the in-process harness: tests and benchmarks
//                                                  share them; the product never imports them
//   bench/, tests/                                 benchmarks and tests: on top of everything
//   main.ts, main_deno.ts, workers/, scripts/      entries: wire everything
//   server/                                        web composition root and the Node fast path
//   boot/                                          process start-up and shutdown shared by every entry
//   routes/ → components/, islands/                the web tier: thin handlers, server-rendered pages
//   activities/                                    thin Temporal adapters over lib/ (no SQL)
//   workflows/                                     deterministic orchestration (types of lib/ only)
//   workflows/contract.ts                          the one Temporal seam callers import
//   lib/<capability>/                              where each thing is decided, in CAPABILITY_ORDER below
//   lib/temporal/                                  the client side of the Temporal seam
//   lib/stores/  lib/shared/                       the two ground floors: all SQL; config, errors, crypto…
//
// Parsed with swc (TypeScript 7 has no JS API for dependency-cruiser); `type-only` imports are told apart.

/**
 * The capabilities of lib/, bottom layer first. A capability imports its own folder and those of lower layers,
 * never one of its own layer or above (type-only imports included), so no two folders import each other and
 * the order cannot knot. A new folder takes a place here before it imports or is imported.
 */
const CAPABILITY_ORDER = [
  ['shared'],
  ['stores'],
  ['temporal', 'targets', 'codes', 'i18n'],
  ['auth', 'ui', 'idempotency', 'webhooks'],
  ['cdn', 'clicks', 'archive'],
  ['redirect'],
  ['failover', 'health'],
  ['prober'],
  ['vendors'],
  ['propagation'],
  ['safety'],
  ['links', 'escrow', 'operations', 'analytics', 'domains'],
  ['publishing', 'retarget', 'snapshot'],
  ['reconcile'],
  ['destinations'],
];
const CAPABILITIES = CAPABILITY_ORDER.flat();

/** One rule per capability: what it may import of lib/, as an allow-list (everything below it). */
function capabilityOrderRules() {
  return CAPABILITY_ORDER.flatMap((layer, index) => {
    const below = CAPABILITY_ORDER.slice(0, index).flat();
    return layer.map((capability) => ({
      name: `lib-${capability}-imports-downward`,
      comment: `lib/${capability} may import ${below.length === 0 ? 'no other capability' : below.map((c) => `lib/${c}`).join(', ')} (CAPABILITY_ORDER).`,
      severity: 'error',
      from: { path: `^lib/${capability}/` },
      to: { path: '^lib/[^/]+/', pathNot: `^lib/(${[capability, ...below].join('|')})/` },
    }));
  });
}

const LIB_CAPABILITIES = '^lib/(?!shared/|stores/|temporal/)[^/]+/';
const ABOVE_LIB =
  '^(routes|components|islands|server|boot|activities|workers|scripts|bench|tests|devkit)/|^main(_deno)?\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...capabilityOrderRules(),
    {
      name: 'capabilities-have-a-place',
      comment: 'Every lib/ folder is in CAPABILITY_ORDER, so the order says what it may import.',
      severity: 'error',
      from: { path: `^lib/(?!(${CAPABILITIES.join('|')})/)[^/]+/` },
      to: { path: '^lib/' },
    },
    {
      name: 'shared-is-the-ground-floor',
      comment: 'lib/shared (config, errors, crypto, logging, metrics) imports nothing else of ours.',
      severity: 'error',
      from: { path: '^lib/shared/' },
      to: {
        path: '^(lib/(?!shared/)|routes|components|islands|server|boot|activities|workers|workflows|scripts)',
      },
    },
    {
      name: 'stores-stand-on-shared-only',
      comment: 'lib/stores (all SQL, with its row types) imports only lib/shared and other stores.',
      severity: 'error',
      from: { path: '^lib/stores/' },
      to: {
        path: '^(lib/(?!shared/|stores/)|routes|components|islands|server|boot|activities|workers|workflows|scripts)',
      },
    },
    {
      name: 'lib-never-reaches-up',
      comment: 'lib/ is imported by the layers above it, never the other way (the contract file excepted).',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: `${ABOVE_LIB}|^workflows/(?!contract\\.ts$)` },
    },
    {
      name: 'temporal-sdk-only-in-the-seam',
      comment:
        'Capability code sees Temporal only through lib/temporal (TaskContext, LinkSyncRequester, gateways).',
      severity: 'error',
      from: { path: `${LIB_CAPABILITIES}|^lib/(shared|stores)/` },
      to: { path: '@temporalio/' },
    },
    {
      name: 'workflows-import-types-only',
      comment: 'Workflows are deterministic: from lib/ and activities/ they take types, never code.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^(lib|activities)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-stay-out-of-the-web',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^(routes|components|islands|server|boot|workers|scripts)/' },
    },
    {
      name: 'the-contract-is-a-leaf',
      comment:
        'workflows/contract.ts depends on no workflow, so callers that import it import no workflow code.',
      severity: 'error',
      from: { path: '^workflows/contract\\.ts$' },
      to: { path: '^(workflows|activities)/' },
    },
    {
      name: 'callers-use-the-contract',
      comment:
        'Outside workflows/ (and tests), only workflows/contract.ts is imported: IDs, signals, inputs.',
      severity: 'error',
      from: {
        path: '^(lib|routes|components|islands|server|boot|activities|workers|scripts|bench|devkit)/|^main',
      },
      to: { path: '^workflows/(?!contract\\.ts$)' },
    },
    {
      name: 'activities-are-thin',
      comment: 'Activities bind dependencies and call lib/: no SQL (stores), no web tier.',
      severity: 'error',
      from: { path: '^activities/' },
      to: {
        path: '^(lib/stores|routes|components|islands|server|workers|scripts)/',
        pathNot: '^lib/stores/sql\\.ts$',
      },
    },
    {
      name: 'activities-pass-the-pool-by-type',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^lib/stores/sql\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'routes-reach-data-through-lib',
      comment: 'Routes call lib/ functions; the pool type is the only thing of lib/stores they may name.',
      severity: 'error',
      from: { path: '^routes/' },
      to: { path: '^lib/stores/', pathNot: '^lib/stores/sql\\.ts$' },
    },
    {
      name: 'routes-pass-the-pool-by-type',
      severity: 'error',
      from: { path: '^routes/' },
      to: { path: '^lib/stores/sql\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'routes-are-below-the-composition-root',
      severity: 'error',
      from: { path: '^routes/' },
      to: { path: '^(server|boot|activities|workers|scripts)/' },
    },
    {
      name: 'components-render-lib-types',
      comment: 'Server-rendered components take lib/ types and never touch stores, routes or processes.',
      severity: 'error',
      from: { path: '^components/' },
      to: { path: '^(lib/stores|routes|server|boot|activities|workers|workflows|scripts)/' },
    },
    {
      name: 'islands-are-browser-code',
      comment: 'Islands run in the browser: other islands, components and runtime-neutral lib/ui only.',
      severity: 'error',
      from: { path: '^islands/' },
      to: { path: '^(lib/(?!ui/)|routes|server|boot|activities|workers|workflows|scripts)' },
    },
    {
      name: 'tooling-never-imports-tests',
      comment:
        'Benchmarks, scripts and the devkit stand without tests/: what they share with tests lives in devkit/.',
      severity: 'error',
      from: { path: '^(bench|scripts|devkit)/' },
      to: { path: '^tests/' },
    },
    {
      name: 'the-product-never-imports-the-devkit',
      comment:
        'Fakes and the harness are for tests and benchmarks; no process we ship loads them (lib: see above).',
      severity: 'error',
      from: {
        path: '^(routes|components|islands|server|boot|activities|workers|workflows)/|^main(_deno)?\\.ts$',
      },
      to: { path: '^devkit/' },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles hide the layering; type-only cycles included.',
      severity: 'error',
      from: { pathNot: '^(tests|bench)/' },
      to: { circular: true },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|tests/histories|static|\\.tools|\\.data|\\.cache)' },
    includeOnly: {
      path: '^(lib|routes|components|islands|server|boot|activities|workers|workflows|scripts|bench|tests|devkit)/|^main(_deno)?\\.ts$|node_modules/@temporalio',
    },
    moduleSystems: ['es6'],
  },
};
