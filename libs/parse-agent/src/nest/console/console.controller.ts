import { Controller, UseGuards, type Type } from '@nestjs/common';
import { ConsoleApiRoutes } from './console-api.controller';
import type { ResolvedConsoleOptions } from './console-options';
import { ConsolePageRoutes } from './console-page.controller';
import { ConsolePreAuthGuard } from './console-pre-auth.guard';

/**
 * The console's two controllers for the configured path (route and guards are class metadata,
 * so they are set per configuration, like the MCP endpoint's): the page and sign-in, open to
 * anyone since they carry no data, and the JSON API behind the host's guards. The handlers are the
 * routes classes'; each configuration gets its own subclasses to decorate.
 */
export function createConsoleControllers(options: ResolvedConsoleOptions): Type<unknown>[] {
  class ConsolePageController extends ConsolePageRoutes {}
  Controller(options.path)(ConsolePageController);
  class ConsoleApiController extends ConsoleApiRoutes {}
  Controller(`${options.path}/api`)(ConsoleApiController);
  // The pre-auth limit first: an anonymous flood is refused before a host guard asks Parse.
  UseGuards(ConsolePreAuthGuard, ...options.guards)(ConsoleApiController);
  return [ConsolePageController, ConsoleApiController];
}
