import type { TestStack } from './test-stack';

export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { __PARSE_TEST_STACK__?: TestStack };
  await holder.__PARSE_TEST_STACK__?.stop();
  delete holder.__PARSE_TEST_STACK__;
}
