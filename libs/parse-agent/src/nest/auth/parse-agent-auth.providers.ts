import type { Provider } from '@nestjs/common';
import { ParseSessionVerifier } from '../../auth/session-verifier';
import { ParseRestClient } from '../../data/parse-rest/parse-rest-client';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';

/** The session check the shipped guards share (one cache per module), built from `auth`. */
export const parseAgentAuthProviders: Provider[] = [
  {
    provide: ParseSessionVerifier,
    useFactory: (options: ParseAgentModuleOptions, parse: ParseRestClient) =>
      new ParseSessionVerifier(parse, options.auth?.session, options.auth?.tenant),
    inject: [PARSE_AGENT_MODULE_OPTIONS, ParseRestClient],
  },
];
