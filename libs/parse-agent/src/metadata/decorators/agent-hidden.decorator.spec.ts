import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import { AgentHidden } from './agent-hidden.decorator';

describe('@AgentHidden', () => {
  it('hides the class from every agent, master key included', () => {
    @AgentHidden()
    class AuditLog {}
    const registry = new MetadataRegistry().register(AuditLog);
    expect(registry.isHidden('AuditLog')).toBe(true);
    expect(registry.isHidden('AuditLog', true)).toBe(true);
  });

  it("with except: 'masterKey' keeps the class reachable for master-key agents only", () => {
    @AgentHidden({ except: 'masterKey' })
    class AuditLog {}
    const registry = new MetadataRegistry().register(AuditLog);
    expect(registry.isHidden('AuditLog', false)).toBe(true);
    expect(registry.isHidden('AuditLog', true)).toBe(false);
  });

  it.each(['sessionToken', 'master_key', 'admin', ''])(
    "refuses except %p: only 'masterKey' is accepted",
    (except) => {
      expect(() => AgentHidden({ except: except as never })(class AuditLog {})).toThrow(
        new ParseAgentConfigError(
          `@AgentHidden on AuditLog: except only accepts 'masterKey', got ${JSON.stringify(except)}.`,
        ),
      );
    },
  );
});
