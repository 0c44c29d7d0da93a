import {
  Catch,
  ForbiddenException,
  HttpException,
  Logger,
  UnauthorizedException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { StoreUnavailableError } from '../../core/errors';
import { nodeRequest, nodeResponse } from './mcp-platform';
import { MCP_LOG_CONTEXT } from '../../transport/http/mcp-http.constants';
import { sendJsonRpcError, sendUnauthorized } from '../../transport/http/mcp-http-response';
import { RateLimitedLogger } from '../../transport/shared/rate-limited-logger';
import { requestIdOf, unauthorizedLogLine } from '../../transport/http/unauthorized-log';

/**
 * Keeps the endpoint speaking JSON-RPC when something outside the handler throws, typically a host
 * guard: a refusal (Unauthorized or Forbidden) is the same fixed 401 body agentFactory refusals
 * get, with no reason on the wire (the log line has the guard's message and the request id);
 * anything unexpected is "Internal error", with only the class name logged.
 */
@Catch()
export class McpExceptionFilter implements ExceptionFilter {
  // One per process (the filter is a singleton): a flood of refusals writes a few lines a minute.
  protected readonly logger = new RateLimitedLogger(new Logger(MCP_LOG_CONTEXT));

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = nodeResponse(host.switchToHttp().getResponse<unknown>());
    const name = exception instanceof Error ? exception.constructor.name : typeof exception;
    if (res.headersSent) {
      this.logger.warn(`Error after the response started: ${name}`);
      if (!res.writableEnded) res.end();
      return;
    }
    if (exception instanceof UnauthorizedException || exception instanceof ForbiddenException) {
      const req = nodeRequest(host.switchToHttp().getRequest<unknown>());
      this.logger.warn(unauthorizedLogLine(name, guardReason(exception), requestIdOf(req, res)));
      return sendUnauthorized(res);
    }
    if (exception instanceof StoreUnavailableError) {
      // Transient and safe to say: which store is down tells the client to retry, nothing more.
      this.logger.warn(exception.message);
      return sendJsonRpcError(res, 503, -32000, `Service Unavailable: ${exception.message}`, {
        headers: { 'Retry-After': String(exception.retryAfter) },
      });
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 429) return sendJsonRpcError(res, 429, -32000, 'Too Many Requests');
      if (status === 503) {
        this.logger.warn(`Service unavailable: ${name}`);
        return sendJsonRpcError(res, 503, -32000, 'Service Unavailable: retry shortly', {
          headers: { 'Retry-After': '5' },
        });
      }
      if (status < 500) return sendJsonRpcError(res, status, -32600, 'Invalid Request');
    }
    this.logger.warn(`Internal error: ${name}`);
    sendJsonRpcError(res, 500, -32603, 'Internal error');
  }
}

/** The refusing guard's own message; Nest's defaults say nothing, so they are not a reason. */
function guardReason(exception: UnauthorizedException | ForbiddenException): string | undefined {
  const message = exception.message;
  if (exception instanceof ForbiddenException && message === 'Forbidden resource')
    return 'a guard returned false';
  return message && message !== 'Unauthorized' ? message : undefined;
}
