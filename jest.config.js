/**
 * Two jest projects. `unit`: the pure specs beside the code (and the architecture check); they never
 * start a server, so `npm run test:unit` needs no database. `integration`: the suites under test/,
 * which share one real Parse Server on a real PostgreSQL started by the global setup.
 */
// Transpile only (type checking is `npm run build` / lint's job), so the suite starts fast.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }];

// Nest 12 publishes ES modules; Jest 29 cannot require them, so they are compiled to CommonJS.
const esmPackages = ['@nestjs'];
const esmToCjs = '<rootDir>/test/harness/esm-to-cjs.transform.cjs';

const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': tsJest,
    [`/node_modules/(?:${esmPackages.join('|')})/.+\\.js$`]: esmToCjs,
  },
  transformIgnorePatterns: [`/node_modules/(?!(?:${esmPackages.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Security log lines (master-key audit, denied calls) go nowhere unless a test routes them.
  setupFiles: ['<rootDir>/test/harness/quiet-security-log.ts'],
  moduleNameMapper: {
    '^nestjs-parse-agent$': '<rootDir>/libs/parse-agent/src/index.ts',
    '^nestjs-parse-agent/(.*)$': '<rootDir>/libs/parse-agent/src/$1',
  },
};

module.exports = {
  testTimeout: 30000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/libs/parse-agent/src/**/*.spec.ts',
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/test/architecture/**/*.spec.ts',
      ],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.spec.ts'],
      testPathIgnorePatterns: ['<rootDir>/test/architecture/'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    },
  ],
};
