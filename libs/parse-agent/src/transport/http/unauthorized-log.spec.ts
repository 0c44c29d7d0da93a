import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { requestIdOf, unauthorizedLogLine } from './unauthorized-log';

function exchange(headers: Record<string, string> = {}): {
  req: IncomingMessage;
  res: ServerResponse;
} {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return { req, res: new ServerResponse(req) };
}

describe('the 401 log line', () => {
  it('names the error class, the reason and the request id, starting with "Unauthorized:"', () => {
    expect(unauthorizedLogLine('AgentUnauthorizedError', 'no principal', 'req-42')).toBe(
      'Unauthorized: AgentUnauthorizedError reason="no principal" request_id=req-42',
    );
  });

  it('says when no reason was given, and keeps a hostile reason on one short line', () => {
    expect(unauthorizedLogLine('UnauthorizedException', undefined, 'r1')).toBe(
      'Unauthorized: UnauthorizedException reason=none given request_id=r1',
    );
    const line = unauthorizedLogLine('X', `expired\n{"level":"error"}\r${'a'.repeat(500)}`, 'r2');
    expect(line).not.toMatch(/[\r\n]/);
    expect(line.length).toBeLessThan(200);
    expect(line).toMatch(/ request_id=r2$/);
  });

  it("takes the host's id from the response, else the client's, else makes one and echoes it", () => {
    const hosted = exchange({ 'x-request-id': 'client-1' });
    hosted.res.setHeader('X-Request-Id', 'host-1');
    expect(requestIdOf(hosted.req, hosted.res)).toBe('host-1');

    const client = exchange({ 'x-request-id': 'client-2' });
    expect(requestIdOf(client.req, client.res)).toBe('client-2');

    // A malformed id is not trusted: a new one replaces it, and the response carries it.
    const bare = exchange({ 'x-request-id': 'bad id\nwith newline' });
    const made = requestIdOf(bare.req, bare.res);
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect(bare.res.getHeader('x-request-id')).toBe(made);
  });
});
