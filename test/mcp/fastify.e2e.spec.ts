import { describePlatformScenarios } from './platform-scenarios';

/** The endpoint under @nestjs/platform-fastify: the same scenarios as under Express. */
describePlatformScenarios('fastify');
