import type { ParseAgent } from '../agent/parse-agent';
import type { RelationEdge } from '../metadata/metadata.types';
import { PARSE_CONVENTIONS } from './parse-conventions';
import {
  identifierArg,
  iso8601Arg,
  objectIdArg,
  requireArg,
  type PromptArgs,
} from './prompt-arguments';
import type { PromptRegistration } from './prompt-registry';

const DEFAULT_RECENT_LIMIT = 10;
const MAX_RECENT_LIMIT = 100;

const json = (value: unknown) => JSON.stringify(value);

function className(args: PromptArgs, name = 'class_name'): string {
  return identifierArg(requireArg(args, name), name);
}

/** Relation edges whose two ends this agent may see (hidden or filtered classes never appear). */
function visibleEdges(agent: ParseAgent): RelationEdge[] {
  const { access } = agent;
  return access.metadata
    .relationGraph()
    .filter((edge) => !access.isDenied(edge.from) && !access.isDenied(edge.to));
}

function renderRelations(args: PromptArgs, agent: ParseAgent): string {
  const subset = (args.classes ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => identifierArg(entry, 'classes entry'));
  const wanted = subset.length ? new Set(subset) : undefined;
  const edges = visibleEdges(agent).filter(
    (edge) => !wanted || (wanted.has(edge.from) && wanted.has(edge.to)),
  );

  let header = wanted
    ? `Relationships among ${subset.join(', ')} (${edges.length} found).`
    : `Relationships between the Parse classes you can query (${edges.length} found).`;
  if (wanted && edges.length === 0) {
    header +=
      ' None matched: class names are case-sensitive and system classes keep their underscore (for example _User).';
  }
  const diagram = edges.length
    ? edges.map((e) => `${e.from} ─${e.cardinality}→ ${e.to} (${e.via})`).join('\n')
    : '(no relationships declared)';
  return [
    header,
    'Each line reads "A ─1:N→ B (B.field)": one A relates to many B, and B stores the pointer in that field; "N:M" lines name the Relation column that links the two classes. Field names are shown as stored (camelCase).',
    'To follow a relationship, put the owning field in a query_class where: constraint (a pointer value) or in include: to fetch the related object with each row.',
    '',
    diagram,
  ].join('\n');
}

function renderCountBy(args: PromptArgs): string {
  const cls = className(args);
  const field = identifierArg(requireArg(args, 'group_by'), 'group_by');
  const call = { class_name: cls, field, operation: 'count', sort: 'value_desc', limit: 25 };
  return [
    `Count the objects of class "${cls}" grouped by the field "${field}".`,
    `Call group_by with ${json(call)}.`,
    `The result lists groups as { key, value } with the count in value. If it carries pointer_class, each key is an objectId of that class: get_objects with a few of them can give the groups readable names. A null key counts the objects with no value for "${field}".`,
    'If the result says truncated, there are more groups than listed. Report the largest groups with their counts, the objects with no value, and the overall total (count_objects gives it).',
  ].join('\n');
}

function renderRecentActivity(args: PromptArgs): string {
  const cls = className(args);
  let limit = Number.parseInt(args.limit ?? String(DEFAULT_RECENT_LIMIT), 10);
  if (!Number.isFinite(limit) || limit <= 0) limit = DEFAULT_RECENT_LIMIT;
  limit = Math.min(limit, MAX_RECENT_LIMIT);
  return [
    `Show the ${limit} most recently created objects of class "${cls}".`,
    `Call query_class with class_name="${cls}", order="-createdAt" and limit=${limit}.`,
    'List them newest first with their most telling fields, and state the createdAt of the newest one.',
  ].join('\n');
}

function renderFindRelationship(args: PromptArgs): string {
  const parentClass = className(args, 'parent_class');
  const parentId = objectIdArg(requireArg(args, 'parent_id'), 'parent_id');
  const childClass = className(args, 'child_class');
  const pointerField = identifierArg(requireArg(args, 'pointer_field'), 'pointer_field');
  const where = {
    [pointerField]: { __type: 'Pointer', className: parentClass, objectId: parentId },
  };
  return [
    `Find the objects of class "${childClass}" whose field "${pointerField}" points to ${parentClass} ${parentId}.`,
    `Constraint: where=${json(where)}`,
    `First call count_objects with class_name="${childClass}" and that where, then query_class with the same class_name and where, and limit=20.`,
    `The field name must be spelled exactly as stored (camelCase); if nothing matches, check it with get_schema on "${childClass}".`,
    'Report the count first, then summarise the objects you fetched.',
  ].join('\n');
}

function renderCreatedInRange(args: PromptArgs): string {
  const cls = className(args);
  const since = iso8601Arg(requireArg(args, 'since'), 'since');
  const until =
    args.until !== undefined && args.until.trim() !== ''
      ? iso8601Arg(args.until, 'until')
      : undefined;
  const range: Record<string, unknown> = { $gte: { __type: 'Date', iso: since } };
  if (until) range.$lt = { __type: 'Date', iso: until };
  const where = { createdAt: range };
  const window = until ? `from ${since} (inclusive) to ${until} (exclusive)` : `since ${since}`;
  return [
    `How many objects of class "${cls}" were created ${window}?`,
    `Constraint: where=${json(where)}`,
    `Call count_objects with class_name="${cls}" and that where, then query_class with the same class_name and where, order="-createdAt" and limit=10.`,
    'Report the count, then the earliest and latest createdAt among the objects you fetched.',
  ].join('\n');
}

/** The prompts every server offers, in the order `prompts/list` shows them. */
export const BUILTIN_PROMPTS: readonly PromptRegistration[] = Object.freeze<PromptRegistration[]>([
  {
    name: 'parse_conventions',
    description:
      'How Parse shapes its data (ids, pointers, dates, system classes) and the safety rules for tool output. Fetch once and put it in your system prompt.',
    arguments: [],
    render: () => PARSE_CONVENTIONS,
  },
  {
    name: 'parse_relations',
    description:
      'A text diagram of how the classes you can query point to each other, from the declared relations. Optionally limited to a comma-separated list of classes.',
    arguments: [
      {
        name: 'classes',
        description:
          'Comma-separated class names; only relationships with both ends in the list are shown. Omit for all.',
        required: false,
      },
    ],
    render: renderRelations,
  },
  {
    name: 'explore_database',
    description:
      'Survey the database: list the classes, count each, and summarise what the application stores.',
    arguments: [],
    render: () =>
      [
        'Give me an overview of this Parse database.',
        'Call get_all_schemas to list the classes, then count_objects for each one. Skip classes whose name starts with "_", except _User and _Role.',
        'Group the classes by purpose (accounts and access, content, application data), give each a one-line description with its object count, and end with a short paragraph on what the application seems to do.',
      ].join('\n'),
  },
  {
    name: 'class_overview',
    description: 'Describe one class in depth: its fields, how many objects it holds, and samples.',
    arguments: [
      { name: 'class_name', description: 'The Parse class to describe.', required: true },
    ],
    render: (args) => {
      const cls = className(args);
      return [
        `Describe the Parse class "${cls}".`,
        `Call get_schema with class_name="${cls}" for its fields, count_objects with class_name="${cls}" for its size, and get_sample_objects with class_name="${cls}" and limit=3 to see real values.`,
        'Summarise each field (type and what it appears to hold), what the class is for, and anything notable in the samples.',
      ].join('\n');
    },
  },
  {
    name: 'count_by',
    description: 'Count the objects of a class grouped by the values of one field.',
    arguments: [
      { name: 'class_name', description: 'The Parse class to count.', required: true },
      { name: 'group_by', description: 'The field whose values form the groups.', required: true },
    ],
    render: renderCountBy,
  },
  {
    name: 'recent_activity',
    description: 'Show the newest objects of a class.',
    arguments: [
      { name: 'class_name', description: 'The Parse class to look at.', required: true },
      {
        name: 'limit',
        description: `How many objects to show (default ${DEFAULT_RECENT_LIMIT}, at most ${MAX_RECENT_LIMIT}).`,
        required: false,
      },
    ],
    render: renderRecentActivity,
  },
  {
    name: 'find_relationship',
    description:
      'Find the objects of one class that point to a given object of another class through a pointer field.',
    arguments: [
      { name: 'parent_class', description: 'Class of the object pointed to.', required: true },
      { name: 'parent_id', description: 'objectId of the object pointed to.', required: true },
      { name: 'child_class', description: 'Class holding the pointer field.', required: true },
      {
        name: 'pointer_field',
        description: 'The pointer field on the child class, as stored (camelCase).',
        required: true,
      },
    ],
    render: renderFindRelationship,
  },
  {
    name: 'created_in_range',
    description: 'Count and sample the objects of a class created within a time window.',
    arguments: [
      { name: 'class_name', description: 'The Parse class to look at.', required: true },
      {
        name: 'since',
        description: 'Start of the window, ISO 8601 (inclusive).',
        required: true,
      },
      {
        name: 'until',
        description: 'End of the window, ISO 8601 (exclusive). Omit for now.',
        required: false,
      },
    ],
    render: renderCreatedInRange,
  },
]);
