import { startTestStack, TEST_ENV } from './test-stack';

export default async function globalSetup(): Promise<void> {
  const stack = await startTestStack();
  (globalThis as { __PARSE_TEST_STACK__?: unknown }).__PARSE_TEST_STACK__ = stack;
  process.env[TEST_ENV.serverURL] = stack.serverURL;
  process.env[TEST_ENV.appId] = stack.appId;
  process.env[TEST_ENV.masterKey] = stack.masterKey;
  process.env[TEST_ENV.javascriptKey] = stack.javascriptKey;
  process.env[TEST_ENV.databaseURI] = stack.databaseURI;
}
