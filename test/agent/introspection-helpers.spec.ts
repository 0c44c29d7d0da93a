import {
  resetSecurityBanners,
  securityBannersSuppressed,
  suppressSecurityBanners,
  toolAllowed,
  toolCategory,
} from 'nestjs-parse-agent/ops';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';

/** The exported introspection helpers on real agents (Nest module, real Parse Server). */
describe('introspection helpers', () => {
  let bed: AgentTestBed;
  beforeAll(async () => {
    bed = await createAgentTestBed(CORE_MODELS);
  });
  afterAll(async () => {
    suppressSecurityBanners();
    await bed.close();
  });

  it('toolAllowed follows the tier, the tools filter and the client-mode ceiling', () => {
    const reader = bed.factory.create({
      sessionToken: 'r:someone',
      tools: { except: ['count_objects'] },
    });
    expect(toolAllowed(reader, 'query_class')).toBe(true);
    expect(toolAllowed(reader, 'count_objects')).toBe(false);
    expect(toolAllowed(reader, 'update_object')).toBe(false);
    const admin = bed.factory.create({ sessionToken: 'r:someone', permissions: 'admin' });
    expect(toolAllowed(admin, 'create_class')).toBe(false);
    expect(toolAllowed(bed.factory.create({ permissions: 'admin' }), 'create_class')).toBe(true);
    for (const name of bed.tools.list().map((t) => t.name)) {
      expect(toolAllowed(reader, name)).toBe(reader.allowedTools().includes(name));
    }
  });

  it('toolCategory reads the module’s registry, registered tools included', () => {
    bed.tools.register({
      name: 'intro_probe',
      description: 'x',
      category: 'ops',
      handler: () => 1,
    });
    expect(toolCategory(bed.tools, 'group_by')).toBe('aggregate');
    expect(toolCategory(bed.tools, 'intro_probe')).toBe('ops');
    bed.tools.unregister('intro_probe');
    expect(toolCategory(bed.tools, 'intro_probe')).toBeUndefined();
  });

  it('reports and resets the banner state: one master-key banner per process unless suppressed', () => {
    const seen: string[] = [];
    resetSecurityBanners((m) => seen.push(m));
    expect(securityBannersSuppressed()).toBe(false);
    bed.factory.create({});
    bed.factory.create({});
    expect(seen.filter((m) => m.includes('master key'))).toHaveLength(1);
    resetSecurityBanners((m) => seen.push(m));
    suppressSecurityBanners();
    expect(securityBannersSuppressed()).toBe(true);
    bed.factory.create({});
    expect(seen).toHaveLength(1);
  });
});
