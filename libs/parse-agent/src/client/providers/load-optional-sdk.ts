import { ParseAgentConfigError } from '../../core/errors';

/**
 * Loads a provider SDK only when that provider is used, so the library does not depend on every
 * SDK. A missing package becomes an error that says how to install it.
 */
export function loadOptionalSdk<T>(moduleName: string, providerName: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(moduleName) as T;
  } catch (error) {
    const code = (error as { code?: string })?.code;
    const missing =
      code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${moduleName}'`);
    if (!missing) throw error;
    throw new ParseAgentConfigError(
      `The ${providerName} LLM provider needs the '${moduleName}' package, which is not installed. Install it next to nestjs-parse-agent: npm install ${moduleName}`,
    );
  }
}
