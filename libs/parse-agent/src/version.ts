/** Library version, kept in step with libs/parse-agent/package.json. */
export const PARSE_AGENT_VERSION = '0.1.0';
