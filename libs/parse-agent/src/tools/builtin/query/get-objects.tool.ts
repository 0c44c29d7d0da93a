import { MAX_GET_OBJECTS_IDS, OBJECT_ID_PATTERN } from '../../../core/constants';
import { AgentValidationError } from '../../../core/errors';
import { formatObjectsResult } from '../../../format/object-result';
import { readTool } from '../../read/read-tool';
import { APPLY_CANONICAL_FILTER_ARG, classArguments, INCLUDE_ARG } from '../tool-schemas';
import { GET_OBJECTS_OUTPUT } from '../output-schemas';

export const getObjects = readTool({
  name: 'get_objects',
  description: `Fetch up to ${MAX_GET_OBJECTS_IDS} objects of one class by objectId in one call; results are keyed by id, with the ids not found listed in missing.`,
  category: 'query',
  timeout: 20,
  oversize: 'trim-rows',
  outputSchema: GET_OBJECTS_OUTPUT,
  inputSchema: classArguments(
    {
      ids: {
        type: 'array',
        items: { type: 'string' },
        description: `objectIds (at most ${MAX_GET_OBJECTS_IDS} distinct).`,
      },
      include: INCLUDE_ARG,
      apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
    },
    ['ids'],
  ),
  handler: async (args, { read }) => {
    await read.gate(args.class_name);
    const ids = [...new Set(args.ids)];
    if (ids.length > MAX_GET_OBJECTS_IDS) {
      throw new AgentValidationError(
        `ids holds ${ids.length} distinct ids; the maximum is ${MAX_GET_OBJECTS_IDS}. Use query_class with {"objectId": {"$in": [...]}} and paging for more.`,
      );
    }
    const bad = ids.find((id) => !OBJECT_ID_PATTERN.test(id));
    if (bad !== undefined) throw new AgentValidationError(`ids: '${bad}' is not a valid objectId.`);
    if (!ids.length) return formatObjectsResult(args.class_name, {}, [], 0);
    const { rows, plan, withheldIncludes } = await read.getMany(args.class_name, ids, {
      include: args.include,
      applyCanonicalFilter: args.apply_canonical_filter,
    });
    const byId: Record<string, Record<string, unknown>> = {};
    for (const row of rows) byId[String(row.objectId)] = row;
    const missing = ids.filter((id) => !(id in byId));
    return formatObjectsResult(args.class_name, byId, missing, ids.length, {
      truncatedIncludeFields: plan.truncatedIncludeFields,
      withheldIncludes,
    });
  },
});
