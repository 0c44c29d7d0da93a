// Public surface of nestjs-parse-agent: named re-exports only.
export { PARSE_AGENT_VERSION } from './version';
