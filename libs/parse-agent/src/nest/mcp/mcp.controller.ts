import {
  Controller,
  Delete,
  Get,
  Inject,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
  type Type,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { McpExceptionFilter } from './mcp-exception.filter';
import { McpHttpHandler } from '../../transport/http/mcp-http.handler';
import type { McpRequest } from '../../transport/http/mcp-request-gate';

/**
 * Builds the endpoint's controller for the configured path and host guards (a class per module
 * configuration, since route and guards are class metadata). The work happens in McpHttpHandler.
 */
export function createMcpController(options: ResolvedMcpEndpointOptions): Type<unknown> {
  @Controller(options.path)
  @UseFilters(McpExceptionFilter)
  class McpController {
    constructor(@Inject(McpHttpHandler) protected readonly handler: McpHttpHandler) {}

    @Post()
    post(@Req() req: McpRequest, @Res() res: ServerResponse): Promise<void> {
      return this.handler.handlePost(req, res);
    }

    @Get()
    stream(@Req() req: McpRequest, @Res() res: ServerResponse): Promise<void> {
      return this.handler.handleGet(req, res);
    }

    @Delete()
    endSession(@Req() req: McpRequest, @Res() res: ServerResponse): Promise<void> {
      return this.handler.handleDelete(req, res);
    }

    @Get('tools')
    tools(@Req() req: McpRequest, @Res() res: ServerResponse): Promise<void> {
      return this.handler.handleToolList(req, res);
    }
  }
  if (options.guards.length) UseGuards(...options.guards)(McpController);
  return McpController;
}
