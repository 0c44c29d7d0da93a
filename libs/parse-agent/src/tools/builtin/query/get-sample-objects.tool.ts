import { clampLimit } from '../../../format/applied-limits';
import { DEFAULT_SAMPLE_LIMIT, MAX_SAMPLE_LIMIT } from '../../../core/constants';
import { formatSampleResult } from '../../../format/object-result';
import { readTool } from '../../read/read-tool';
import { classArguments } from '../tool-schemas';
import { GET_SAMPLE_OBJECTS_OUTPUT } from '../output-schemas';

export const getSampleObjects = readTool({
  name: 'get_sample_objects',
  description: `The most recently created objects of a class, to see what its data looks like (default ${DEFAULT_SAMPLE_LIMIT}, max ${MAX_SAMPLE_LIMIT}).`,
  category: 'query',
  timeout: 15,
  oversize: 'trim-rows',
  outputSchema: GET_SAMPLE_OBJECTS_OUTPUT,
  inputSchema: classArguments({
    limit: {
      type: 'integer',
      minimum: 1,
      description: `How many (default ${DEFAULT_SAMPLE_LIMIT}, max ${MAX_SAMPLE_LIMIT}).`,
    },
  }),
  handler: async (args, { read }) => {
    await read.gate(args.class_name);
    const { value: limit, applied } = clampLimit(
      'limit',
      args.limit,
      DEFAULT_SAMPLE_LIMIT,
      MAX_SAMPLE_LIMIT,
    );
    const { rows } = await read.find(args.class_name, { newestFirst: true, limit });
    const result = formatSampleResult(args.class_name, rows);
    return applied ? { ...result, applied_limits: applied } : result;
  },
});
