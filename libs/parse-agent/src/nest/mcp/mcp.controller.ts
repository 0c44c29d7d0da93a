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
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { McpExceptionFilter } from './mcp-exception.filter';
import { nodeExchange } from './mcp-platform';
import { McpHttpHandler } from '../../transport/http/mcp-http.handler';

/**
 * Builds the endpoint's controller for the configured path and host guards (a class per module
 * configuration, since route and guards are class metadata). The work happens in McpHttpHandler,
 * on Node's request and response under Express or Fastify (see nodeExchange).
 */
export function createMcpController(options: ResolvedMcpEndpointOptions): Type<unknown> {
  @Controller(options.path)
  @UseFilters(McpExceptionFilter)
  class McpController {
    constructor(@Inject(McpHttpHandler) protected readonly handler: McpHttpHandler) {}

    @Post()
    post(@Req() request: unknown, @Res() response: unknown): Promise<void> {
      const { req, res, hostRequest } = nodeExchange(request, response);
      return this.handler.handlePost(req, res, hostRequest);
    }

    @Get()
    stream(@Req() request: unknown, @Res() response: unknown): Promise<void> {
      const { req, res, hostRequest } = nodeExchange(request, response);
      return this.handler.handleGet(req, res, hostRequest);
    }

    @Delete()
    endSession(@Req() request: unknown, @Res() response: unknown): Promise<void> {
      const { req, res, hostRequest } = nodeExchange(request, response);
      return this.handler.handleDelete(req, res, hostRequest);
    }

    @Get('tools')
    tools(@Req() request: unknown, @Res() response: unknown): Promise<void> {
      const { req, res, hostRequest } = nodeExchange(request, response);
      return this.handler.handleToolList(req, res, hostRequest);
    }
  }
  if (options.guards.length) UseGuards(...options.guards)(McpController);
  return McpController;
}
