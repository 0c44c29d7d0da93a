import type { ToolDefinition } from '../tool-definition';
import { countObjects } from './count-objects.tool';
import { getAllSchemas } from './get-all-schemas.tool';
import { getObject } from './get-object.tool';
import { getObjects } from './get-objects.tool';
import { getSampleObjects } from './get-sample-objects.tool';
import { getSchema } from './get-schema.tool';
import { listTools } from './list-tools.tool';
import { queryClass } from './query-class.tool';

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
] as ToolDefinition[];
