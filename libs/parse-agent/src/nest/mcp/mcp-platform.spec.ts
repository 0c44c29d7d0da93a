import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { nodeExchange, nodeRequest, nodeResponse } from './mcp-platform';

function nodePair(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  return { req, res: new ServerResponse(req) };
}

describe('the endpoint on either platform (nodeExchange)', () => {
  it('Express: hands over the request and response as they are', () => {
    const { req, res } = nodePair();
    const exchange = nodeExchange(req, res);
    expect(exchange.req).toBe(req);
    expect(exchange.res).toBe(res);
    expect(exchange.hostRequest).toBe(req);
  });

  it('Fastify: Node request and response from .raw, the reply hijacked, the host request kept for agentFactory', () => {
    const { req, res } = nodePair();
    const request = { raw: req, headers: {} };
    let hijacked = 0;
    const reply = { raw: res, hijack: () => hijacked++ };
    const exchange = nodeExchange(request, reply);
    expect(exchange.req).toBe(req);
    expect(exchange.res).toBe(res);
    expect(exchange.hostRequest).toBe(request);
    expect(hijacked).toBe(1);
    expect(nodeResponse(reply)).toBe(res);
    expect(nodeRequest(request)).toBe(req);
    expect(nodeRequest(req)).toBe(req);
    expect(nodeResponse(res)).toBe(res);
  });
});
