// Lint rules for the whole repository: typescript-eslint's recommended set on top of ESLint's, and the
// import boundaries of docs/architecture.md ("Who may import whom"), enforced with no-restricted-imports.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = 'assert|async_hooks|buffer|child_process|cluster|crypto|dgram|dns|events|fs|http|http2|https|inspector|module|net|os|path|perf_hooks|process|querystring|readline|stream|string_decoder|timers|tls|tty|url|util|v8|vm|worker_threads|zlib';

/** Import boundaries: one pattern per rule, `regex` matched against the import specifier as written. */
const BOUNDARIES = {
  gatewayToNode: { regex: '^(\\.\\./)+gpu-node/', message: 'gateway/ and gpu-node/ never import each other (docs/architecture.md).' },
  nodeToGateway: { regex: '^(\\.\\./)+gateway/', message: 'gateway/ and gpu-node/ never import each other (docs/architecture.md).' },
  sharedUp: { regex: '^(\\.\\./)+(gateway|gpu-node)/', message: 'shared/ imports neither gateway/ nor gpu-node/ (docs/architecture.md).' },
  coreNode: { regex: `^(node:|(${NODE_BUILTINS})(/|$))`, message: 'gateway/src/core runs on Workers too: no Node built-ins; take the capability through a port in core/ports.' },
  coreDrivers: { regex: '^(pino|ioredis|bullmq|prom-client)(/|$)|^@grpc/', message: 'gateway/src/core imports no driver (pino, ioredis, @grpc/*, bullmq, prom-client): those belong in gateway/src/adapters.' },
  coreAdapters: { regex: '(^|/)adapters(/|$)', message: 'gateway/src/core never imports gateway/src/adapters: declare a port in core/ports instead.' },
  coreEntries: { regex: '(^|/)(entry-[^/]*|jobs-entry)(\\.[jt]s)?$', message: 'gateway/src/core never imports an entry file.' },
  coreCli: { regex: '(^|/)cli(/|$)|cli-options', message: 'gateway/src/core never imports the command-line options (gateway/src/cli).' },
  // The node's layers (docs/architecture.md): servers → server-api → repository → models → scheduler → backends.
  nodeBelowServers: { regex: '^(\\.\\./)+(server|server-api|cli)(/|$)', message: 'gpu-node/src below the servers (models, repository, lifecycle, scheduler, ensemble, backends) never imports server/, server-api/ or cli/.' },
  schedulerUp: { regex: '^(\\.\\./)+(ensemble|models|repository)(/|$)', message: 'gpu-node/src/scheduler imports neither ensemble/, models/ nor repository/: such schedulers register by name (scheduler-registry.ts).' },
};

const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const B = BOUNDARIES;

export default tseslint.config(
  { ignores: ['node_modules/**', '**/gen/**', '**/dist/**', 'loadtests/results/**', '**/generated-models/**', '.tessera/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly', fetch: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // Later entries replace the rule's options for the files they match, so each lists every pattern that applies.
  { files: ['shared/**'], rules: restrict(B.sharedUp) },
  { files: ['gpu-node/**'], rules: restrict(B.nodeToGateway) },
  {
    files: ['gpu-node/src/{models,repository,lifecycle,ensemble,backends,messages}/**'],
    rules: restrict(B.nodeToGateway, B.nodeBelowServers),
  },
  { files: ['gpu-node/src/scheduler/**'], rules: restrict(B.nodeToGateway, B.nodeBelowServers, B.schedulerUp) },
  { files: ['gateway/**'], rules: restrict(B.gatewayToNode) },
  {
    files: ['gateway/src/core/**'],
    rules: restrict(B.gatewayToNode, B.coreNode, B.coreDrivers, B.coreAdapters, B.coreEntries, B.coreCli),
  },
);
