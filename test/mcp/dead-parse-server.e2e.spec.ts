import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ParseAgentModule } from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import request from 'supertest';

/** Parse Server down: tool calls fail as tool results, and the endpoint keeps serving. */
describe('MCP endpoint with a dead Parse Server', () => {
  let app: INestApplication;

  beforeAll(async () => {
    suppressSecurityBanners();
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'gone', masterKey: 'gone' },
          agentFactory: () => ({ permissions: 'readonly' }),
          mcp: { path: '/mcp' },
        }),
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(() => app.close());

  const call = (id: number, name: string, args: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });

  it('answers tool calls with isError results and keeps answering', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(app.getHttpServer())
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .send(call(i, 'count_objects', { class_name: 'Order' }))
        .expect(200);
      expect(res.body.result.isError).toBe(true);
      expect(res.body.result._meta).toEqual({ 'parse.error_code': 'parse_error' });
      expect(res.body.result.content[0].text).toMatch(/unreachable/);
      expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
    }
    const ping = await request(app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 9, method: 'ping' })
      .expect(200);
    expect(ping.body).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });
});
