import { BUILTIN_CATEGORIES } from '../../tool-categories';
import { readTool } from '../../read/read-tool';
import { LIST_TOOLS_OUTPUT } from '../output-schemas';

export const listTools = readTool({
  name: 'list_tools',
  description:
    'List the tools this agent may use, with their categories. Optionally filter by category.',
  category: 'discovery',
  timeout: 5,
  outputSchema: LIST_TOOLS_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: {
      category: { type: 'string', description: 'Only tools of this category (case-insensitive).' },
    },
  },
  handler: (args, { agent }) => {
    const wanted = args.category?.toLowerCase();
    const tools = agent
      .toolDefinitions()
      .filter((t) => !wanted || t.category.toLowerCase() === wanted)
      .map((t) => ({ name: t.name, category: t.category, description: t.description }));
    return { tools, categories: BUILTIN_CATEGORIES };
  },
});
