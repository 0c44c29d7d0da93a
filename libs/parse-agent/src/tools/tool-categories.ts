/** Built-in tool categories (a tool's definition names its own; applications may add theirs). */
export type ToolCategory =
  'discovery' | 'schema' | 'query' | 'aggregate' | 'search' | 'mutation' | 'export' | 'custom';

export const BUILTIN_CATEGORIES: Readonly<Record<ToolCategory, string>> = Object.freeze({
  discovery: 'Find out which tools this agent may use.',
  schema: 'Inspect classes: fields, types, indexes and permissions.',
  query: 'Read records: queries, counts, single objects, samples, plans.',
  aggregate: 'Group, summarise and join with aggregation pipelines.',
  search: 'Full-text search with Atlas Search (MongoDB Atlas only).',
  mutation: 'Run domain actions the application declared as agent methods.',
  export: 'Export rows in bulk as CSV, Markdown or a text table.',
  custom: 'Tools the application registered without a built-in category.',
});
