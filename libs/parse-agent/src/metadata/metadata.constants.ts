/** Reflect-metadata keys written by the model decorators. Internal: not exported from the package. */
export const METADATA = {
  parseClass: 'parse-agent:parse-class',
  description: 'parse-agent:description',
  usage: 'parse-agent:usage',
  visible: 'parse-agent:visible',
  hidden: 'parse-agent:hidden',
  fields: 'parse-agent:fields',
  joinFields: 'parse-agent:join-fields',
  largeFields: 'parse-agent:large-fields',
  canonicalFilter: 'parse-agent:canonical-filter',
  tenantScope: 'parse-agent:tenant-scope',
  tenantShared: 'parse-agent:tenant-shared',
  allowCollscan: 'parse-agent:allow-collscan',
  fieldDocs: 'parse-agent:field-docs',
  relations: 'parse-agent:relations',
  methods: 'parse-agent:methods',
  tool: 'parse-agent:tool',
} as const;
