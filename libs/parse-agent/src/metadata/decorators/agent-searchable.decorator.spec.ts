import 'reflect-metadata';
import { MetadataRegistry } from '../metadata-registry';
import { AgentField } from './agent-fields.decorators';
import { AgentSearchable } from './agent-searchable.decorator';
import { ParseClass } from './parse-class.decorator';

describe('@AgentSearchable', () => {
  it('records fields, filter fields and chunking, as columns', () => {
    @ParseClass('Ticket')
    @AgentSearchable({ fields: ['body'], filterFields: ['state'], chunk: { size: 400 } })
    class Ticket {
      @AgentField({ field: 'status' })
      state?: string;
    }
    const meta = new MetadataRegistry().register(Ticket).get('Ticket');
    expect(meta?.searchable).toEqual({
      fields: ['body'],
      filterFields: ['status'],
      chunk: { size: 400, overlap: 100, maxPerDocument: 20 },
    });
  });

  it.each([
    [{ fields: [] }, /at least one/],
    [{ fields: ['_rperm'] }, /not a field an agent may use/],
    [{ fields: ['body'], filterFields: ['ACL'] }, /not a field an agent may use/],
    [{ fields: ['body'], chunk: { size: 100, overlap: 100 } }, /smaller than chunk.size/],
    [{ fields: ['body'], chunk: { maxPerDocument: 0 } }, /maxPerDocument/],
    [{ fields: ['body'], filter: ['x'] }, /unknown option 'filter'/],
  ])('refuses %j with a fix-it message', (options, message) => {
    expect(() => AgentSearchable(options as never)(class Broken {})).toThrow(message);
  });
});
