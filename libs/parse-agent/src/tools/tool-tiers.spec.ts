import { PERMISSION_HIERARCHY, type PermissionLevel } from '../core/constants';
import { BUILTIN_TOOLS } from './builtin';
import { defaultAnnotations, DOMAIN_ACTION_TOOL, READ_ONLY_TOOL } from './builtin/tool-annotations';
import { BUILTIN_CATEGORIES } from './tool-categories';
import { DEFAULT_TOOL_TIMEOUT, timeoutOf } from './tool-definition';
import { PERMISSION_LEVELS } from './tool-tiers';

const LEVELS = Object.keys(PERMISSION_HIERARCHY) as PermissionLevel[];

/** The lowest tier whose published list names the tool; undefined for a name no tier has. */
function reservedTier(name: string): PermissionLevel | undefined {
  return [...LEVELS]
    .sort((a, b) => PERMISSION_HIERARCHY[a] - PERMISSION_HIERARCHY[b])
    .find((level) => PERMISSION_LEVELS[level].includes(name));
}

describe('the permission tier table', () => {
  it('is cumulative: every level may use every tool of the levels below it', () => {
    for (const lower of LEVELS) {
      for (const higher of LEVELS) {
        if (PERMISSION_HIERARCHY[higher] < PERMISSION_HIERARCHY[lower]) continue;
        expect(PERMISSION_LEVELS[higher]).toEqual(
          expect.arrayContaining([...PERMISSION_LEVELS[lower]]),
        );
      }
    }
  });

  it('keeps writes and admin tools out of readonly, and admin tools out of write', () => {
    for (const tool of [
      'create_object',
      'update_object',
      'delete_object',
      'create_class',
      'delete_class',
    ]) {
      expect(PERMISSION_LEVELS.readonly).not.toContain(tool);
    }
    for (const tool of ['delete_object', 'create_class', 'delete_class']) {
      expect(PERMISSION_LEVELS.write).not.toContain(tool);
    }
  });

  it('names the lowest tier for a reserved name and none for an unknown one', () => {
    expect(reservedTier('query_class')).toBe('readonly');
    expect(reservedTier('update_object')).toBe('write');
    expect(reservedTier('delete_class')).toBe('admin');
    expect(reservedTier('atlas_text_search')).toBe('readonly');
    expect(reservedTier('drop_database')).toBeUndefined();
  });
});

describe('the built-in tool definitions', () => {
  it('each declare the tier the published table gives their name', () => {
    for (const tool of BUILTIN_TOOLS) {
      expect({ tool: tool.name, tier: tool.permission }).toEqual({
        tool: tool.name,
        tier: reservedTier(tool.name),
      });
    }
  });

  it('have unique names and belong to a built-in category', () => {
    const names = BUILTIN_TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of BUILTIN_TOOLS)
      expect(Object.keys(BUILTIN_CATEGORIES)).toContain(tool.category);
  });

  it('never call a tool above readonly read-only, and hint every delete as destructive', () => {
    for (const tool of BUILTIN_TOOLS) {
      if (tool.permission !== 'readonly') expect(tool.annotations?.readOnlyHint).not.toBe(true);
      if (tool.name.startsWith('delete_')) expect(tool.annotations?.destructiveHint).toBe(true);
    }
    // call_method runs application code: readonly tier, but never hinted as read-only.
    expect(BUILTIN_TOOLS.find((t) => t.name === 'call_method')?.annotations?.readOnlyHint).toBe(
      false,
    );
  });

  it('default to a 30 second time limit when they name none', () => {
    expect(timeoutOf({})).toBe(DEFAULT_TOOL_TIMEOUT);
    expect(DEFAULT_TOOL_TIMEOUT).toBe(30);
    expect(timeoutOf({ timeout: 60 })).toBe(60);
  });
});

describe('defaultAnnotations for registered tools', () => {
  it('hints read-only only for the readonly tier; anything higher may change data', () => {
    expect(defaultAnnotations('readonly')).toBe(READ_ONLY_TOOL);
    expect(defaultAnnotations('write')).toBe(DOMAIN_ACTION_TOOL);
    expect(defaultAnnotations('admin')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    expect(Object.isFrozen(READ_ONLY_TOOL)).toBe(true);
  });
});
