import type { ToolDefinition } from '../tool-definition';
import { countObjects } from './query/count-objects.tool';
import { getAllSchemas } from './schema/get-all-schemas.tool';
import { getObject } from './query/get-object.tool';
import { getObjects } from './query/get-objects.tool';
import { getSampleObjects } from './query/get-sample-objects.tool';
import { getSchema } from './schema/get-schema.tool';
import { listTools } from './discovery/list-tools.tool';
import { queryClass } from './query/query-class.tool';
import { aggregate } from './aggregate/aggregate.tool';
import { distinct } from './aggregate/distinct.tool';
import { explainQuery } from './aggregate/explain-query.tool';
import { groupBy } from './aggregate/group-by.tool';
import { groupByDate } from './aggregate/group-by-date.tool';
import { exportData } from './export/export-data.tool';
import { callMethod } from './mutation/call-method.tool';
import { createClass } from './mutation/create-class.tool';
import { createObject } from './mutation/create-object.tool';
import { deleteClass } from './mutation/delete-class.tool';
import { deleteObject } from './mutation/delete-object.tool';
import { updateObject } from './mutation/update-object.tool';
import {
  atlasAutocomplete,
  atlasFacetedSearch,
  atlasTextSearch,
} from './search/atlas-search.tools';
import { semanticSearch } from './search/semantic-search.tool';

/** The built-in tools implemented so far, in the order agents see them. */
export const BUILTIN_TOOLS: ToolDefinition[] = [
  listTools,
  getAllSchemas,
  getSchema,
  queryClass,
  countObjects,
  getObject,
  getObjects,
  getSampleObjects,
  explainQuery,
  aggregate,
  groupBy,
  groupByDate,
  distinct,
  exportData,
  atlasTextSearch,
  atlasAutocomplete,
  atlasFacetedSearch,
  semanticSearch,
  callMethod,
  createObject,
  updateObject,
  deleteObject,
  createClass,
  deleteClass,
] as ToolDefinition[];
