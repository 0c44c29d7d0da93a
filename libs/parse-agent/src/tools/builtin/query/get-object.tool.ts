import { OBJECT_ID_PATTERN } from '../../../core/constants';
import { AgentValidationError, ObjectNotFoundError } from '../../../core/errors';
import { formatObjectResult } from '../../../format/object-result';
import { readTool } from '../../read/read-tool';
import {
  APPLY_CANONICAL_FILTER_ARG,
  classArguments,
  INCLUDE_ARG,
  OBJECT_ID_ARG,
} from '../tool-schemas';
import { GET_OBJECT_OUTPUT } from '../output-schemas';

/** Not-found and filtered-out answer the same, so the agent cannot probe what filters hide. */
export function objectNotFound(className: string, objectId: string): ObjectNotFoundError {
  return new ObjectNotFoundError(className, objectId);
}

export const getObject = readTool({
  name: 'get_object',
  description: 'Fetch one object by objectId, optionally expanding pointers with include.',
  category: 'query',
  timeout: 10,
  oversize: 'trim-rows',
  outputSchema: GET_OBJECT_OUTPUT,
  inputSchema: classArguments(
    {
      object_id: OBJECT_ID_ARG,
      include: INCLUDE_ARG,
      apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
    },
    ['object_id'],
  ),
  handler: async (args, { read }) => {
    await read.gate(args.class_name);
    if (!OBJECT_ID_PATTERN.test(args.object_id)) {
      throw new AgentValidationError(`object_id '${args.object_id}' is not a valid objectId.`);
    }
    const { row, plan, withheldIncludes } = await read.get(args.class_name, args.object_id, {
      include: args.include,
      applyCanonicalFilter: args.apply_canonical_filter,
    });
    if (!row) throw objectNotFound(args.class_name, args.object_id);
    return formatObjectResult(args.class_name, row, {
      truncatedIncludeFields: plan.truncatedIncludeFields,
      withheldIncludes,
    });
  },
});
