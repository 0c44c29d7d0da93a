import {
  AgentDescription,
  AgentJoinFields,
  AgentLargeFields,
  AgentVisible,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, type Data } from '../harness/envelopes';
import { createObject, defineClass } from '../harness/fixtures';

/**
 * get_schema hints against a real Parse Server: the class's usage hint, large_field never on a
 * pointer or relation, and truncated_include_fields naming every field a join left out.
 */
const run = Date.now().toString(36);
const POST = `ShPost_${run}`;
const WRITER = `ShWriter_${run}`;
const PUBLIC = { '*': { read: true } };

@ParseClass(POST)
@AgentVisible()
@AgentDescription('Blog posts.', { usage: 'Count by writer; filter on title first.' })
@AgentLargeFields('body', 'writer', 'likes')
class Post {}

@ParseClass(WRITER)
@AgentVisible()
@AgentDescription('People who write posts.')
@AgentJoinFields('name')
class Writer {}

describe('get_schema hints', () => {
  let bed: AgentTestBed;
  let master: ParseAgent;

  beforeAll(async () => {
    await defineClass(WRITER, {
      name: { type: 'String' },
      bio: { type: 'String' },
      email: { type: 'String' },
    });
    const writer = await createObject(
      WRITER,
      { name: 'Ada', bio: 'long', email: 'ada@example.com' },
      PUBLIC,
    );
    await defineClass(POST, {
      title: { type: 'String' },
      body: { type: 'String' },
      writer: { type: 'Pointer', targetClass: WRITER },
      likes: { type: 'Relation', targetClass: WRITER },
    });
    await createObject(
      POST,
      {
        title: 'Hello',
        body: 'x'.repeat(100),
        writer: { __type: 'Pointer', className: WRITER, objectId: writer },
      },
      PUBLIC,
    );
    bed = await createAgentTestBed([Post, Writer]);
    master = bed.factory.create();
  }, 60_000);

  afterAll(() => bed?.close());

  it('shows the usage hint apart from the description, only where declared', async () => {
    const post = ok(await master.execute('get_schema', { class_name: POST }));
    expect(post.description).toBe('Blog posts.');
    expect(post.usage).toBe('Count by writer; filter on title first.');
    const writer = ok(await master.execute('get_schema', { class_name: WRITER }));
    expect(writer).not.toHaveProperty('usage');
  });

  it('flags large fields but never a pointer or a relation', async () => {
    const post = ok(await master.execute('get_schema', { class_name: POST }));
    const byName = Object.fromEntries((post.fields as Data[]).map((f) => [f.name, f]));
    expect(byName.body.large_field).toBe(true);
    expect(byName.writer).not.toHaveProperty('large_field');
    expect(byName.likes).not.toHaveProperty('large_field');
    expect(byName.title).not.toHaveProperty('large_field');
  });

  it('lists every field a join left out, not only large ones', async () => {
    const data = ok(
      await master.execute('query_class', {
        class_name: POST,
        keys: ['title', 'writer'],
        include: ['writer'],
      }),
    );
    expect((data.truncated_include_fields.writer as string[]).sort()).toEqual(['bio', 'email']);
    const row = (data.results as Data[])[0];
    expect(row.writer.name).toBe('Ada');
    expect(row.writer).not.toHaveProperty('bio');
    expect(row.writer).not.toHaveProperty('email');
  });
});
