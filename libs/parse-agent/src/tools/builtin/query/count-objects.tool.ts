import { formatCountResult } from '../../../format/object-result';
import { readTool } from '../../read/read-tool';
import { APPLY_CANONICAL_FILTER_ARG, classArguments, WHERE_ARG } from '../tool-schemas';
import { COUNT_OBJECTS_OUTPUT } from '../output-schemas';

export const countObjects = readTool({
  name: 'count_objects',
  description: 'Count the objects of a class matching Parse constraints (an exact count).',
  category: 'query',
  timeout: 20,
  outputSchema: COUNT_OBJECTS_OUTPUT,
  inputSchema: classArguments({
    where: WHERE_ARG,
    apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
  }),
  handler: async (args, { read }) => {
    const count = await read.count(args.class_name, {
      where: args.where,
      applyCanonicalFilter: args.apply_canonical_filter,
    });
    // Echo only what the caller asked for: operator filter values stay out of agent output.
    return formatCountResult(args.class_name, count, args.where ?? {});
  },
});
