import { describePlatformScenarios } from './platform-scenarios';

/** The platform scenarios under @nestjs/platform-express (the reference the Fastify run matches). */
describePlatformScenarios('express');
