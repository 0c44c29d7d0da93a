/** One jest run for unit specs (beside the code) and integration/e2e suites (test/). */
// Transpile only (type checking is `npm run build` / lint's job), so the suite starts fast.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }];

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: [
    '<rootDir>/libs/parse-agent/src/**/*.spec.ts',
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/test/**/*.spec.ts',
  ],
  moduleNameMapper: {
    '^nestjs-parse-agent$': '<rootDir>/libs/parse-agent/src/index.ts',
    '^nestjs-parse-agent/(.*)$': '<rootDir>/libs/parse-agent/src/$1',
  },
  globalSetup: '<rootDir>/test/harness/global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
  testTimeout: 30000,
};
