import {
  BadRequestException,
  Body,
  ForbiddenException,
  Get,
  HttpCode,
  HttpException,
  Inject,
  Post,
  Req,
  Res,
  ServiceUnavailableException,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { bearerTokenOf } from '../../auth/request-credentials';
import { ParseRequestError, RateLimitExceededError } from '../../core/errors';
import { ParseRestClient } from '../../data/parse-rest/parse-rest-client';
import { checkRateLimit } from '../../ports/rate-limiter';
import { consoleAsset } from './console-assets';
import { rawOf, type AnyRequest, type AnyResponse } from './console-http';
import type { ResolvedConsoleOptions } from './console-options';
import { ConsolePreAuthGuard } from './console-pre-auth.guard';
import { CONSOLE_OPTIONS } from './console.constants';

const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // The page runs only its own script; data is written as text, never parsed as HTML.
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const MAX_CREDENTIAL_LENGTH = 1024;

/**
 * The console's page, its script, sign-in and sign-out: open to anyone, since they carry no data
 * (sign-in and sign-out behind the pre-auth limit only). Its route is set per configuration by
 * createConsoleControllers.
 */
export class ConsolePageRoutes {
  constructor(
    @Inject(CONSOLE_OPTIONS) protected readonly options: ResolvedConsoleOptions,
    @Inject(ParseRestClient) protected readonly parse: ParseRestClient,
  ) {}

  @Get()
  page(@Req() req: AnyRequest, @Res() res: AnyResponse): void {
    const raw = rawOf(res);
    const url = req.originalUrl ?? req.url ?? '';
    const [pathname, query] = url.split('?', 2);
    if (!pathname.endsWith('/')) {
      // Relative links (console.js, api/...) resolve under the mount path, whatever the prefix.
      const last = pathname.slice(pathname.lastIndexOf('/') + 1);
      raw.writeHead(302, { Location: `${encodeURIComponent(last)}/${query ? `?${query}` : ''}` });
      raw.end();
      return;
    }
    send(raw, 'text/html; charset=utf-8', consoleAsset('index.html'));
  }

  @Get('console.js')
  script(@Res() res: AnyResponse): void {
    send(rawOf(res), 'text/javascript; charset=utf-8', consoleAsset('console.js'));
  }

  @Get('console-live.js')
  liveScript(@Res() res: AnyResponse): void {
    send(rawOf(res), 'text/javascript; charset=utf-8', consoleAsset('console-live.js'));
  }

  @Post('api/sign-in')
  @HttpCode(200)
  @UseGuards(ConsolePreAuthGuard)
  async signIn(@Req() req: AnyRequest, @Body() body: unknown) {
    if (!this.options.signIn) throw new ForbiddenException('Sign-in is turned off.');
    const { username, password } = (body ?? {}) as { username?: unknown; password?: unknown };
    if (
      typeof username !== 'string' ||
      typeof password !== 'string' ||
      !username ||
      !password ||
      username.length > MAX_CREDENTIAL_LENGTH ||
      password.length > MAX_CREDENTIAL_LENGTH
    ) {
      throw new BadRequestException('Send JSON { "username": "...", "password": "..." }.');
    }
    if (this.options.signInRateLimiter) {
      try {
        await checkRateLimit(
          this.options.signInRateLimiter,
          `console-sign-in:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`,
          () => undefined,
        );
      } catch (error) {
        if (error instanceof RateLimitExceededError)
          throw new HttpException(
            `Too many sign-in attempts; try again in ${Math.ceil(error.retryAfter)} s.`,
            429,
          );
        throw error;
      }
    }
    try {
      const user = await this.parse.request<{ sessionToken?: string; username?: string }>(
        'POST',
        '/login',
        { username, password },
        { sessionToken: '' },
      );
      if (!user.sessionToken) throw new UnauthorizedException('Wrong username or password.');
      return { session_token: user.sessionToken, username: user.username ?? username };
    } catch (error) {
      if (error instanceof ParseRequestError) {
        if (error.parseCode === 101 || error.status === 404)
          throw new UnauthorizedException('Wrong username or password.');
        throw new ServiceUnavailableException('Parse Server could not check the sign-in.');
      }
      throw error;
    }
  }

  /** Ends the presented Parse session (the page's "Sign out"): Parse's /logout with that token. */
  @Post('api/sign-out')
  @HttpCode(204)
  @UseGuards(ConsolePreAuthGuard)
  async signOut(@Req() req: AnyRequest): Promise<void> {
    const token = bearerTokenOf(req.headers);
    if (!token)
      throw new BadRequestException('Send the session to end as Authorization: Bearer <token>.');
    try {
      await this.parse.request('POST', '/logout', {}, { sessionToken: token });
    } catch (error) {
      // An unknown or already-ended session is what signing out wants.
      if (error instanceof ParseRequestError && error.parseCode === 209) return;
      if (error instanceof ParseRequestError)
        throw new ServiceUnavailableException('Parse Server could not end the session.');
      throw error;
    }
  }
}

function send(res: ServerResponse, type: string, body: Buffer): void {
  res.writeHead(200, { ...PAGE_HEADERS, 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}
