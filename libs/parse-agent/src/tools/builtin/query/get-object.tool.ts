import { OBJECT_ID_PATTERN } from '../../../core/constants';
import { AccessDeniedError, AgentValidationError, ParseRequestError } from '../../../core/errors';
import { formatObjectResult } from '../../../format/object-result';
import { rowInTenant } from '../../../security/tenant-scope';
import { andWhere } from '../../../query/where-composer';
import type { ToolDefinition } from '../../tool-definition';
import { READ_ONLY_TOOL } from '../tool-annotations';
import {
  APPLY_CANONICAL_FILTER_ARG,
  CLASS_NAME_ARG,
  INCLUDE_ARG,
  OBJECT_ID_ARG,
} from '../tool-schemas';
import { GET_OBJECT_OUTPUT } from '../output-schemas';

interface Args {
  class_name: string;
  object_id: string;
  include?: string[];
  apply_canonical_filter?: boolean;
}

/** Not-found and filtered-out answer the same, so the agent cannot probe what filters hide. */
export function objectNotFound(className: string, objectId: string): ParseRequestError {
  return new ParseRequestError(`Parse error: Object not found: ${className}#${objectId}`, 101, 404);
}

export function tenantMismatch(className: string): AccessDeniedError {
  return new AccessDeniedError(
    `Object does not belong to the agent's tenant scope for class '${className}'`,
    {
      kind: 'tenant_scope',
    },
  );
}

export const getObject: ToolDefinition<Args> = {
  name: 'get_object',
  description: 'Fetch one object by objectId, optionally expanding pointers with include.',
  category: 'query',
  permission: 'readonly',
  timeout: 10,
  annotations: READ_ONLY_TOOL,
  outputSchema: GET_OBJECT_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      object_id: OBJECT_ID_ARG,
      include: INCLUDE_ARG,
      apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
    },
    required: ['class_name', 'object_id'],
  },
  handler: async (args, { access, data, signal }) => {
    await access.requireReadableClass(args.class_name);
    if (!OBJECT_ID_PATTERN.test(args.object_id)) {
      throw new AgentValidationError(`object_id '${args.object_id}' is not a valid objectId.`);
    }
    const plan = await access.planRead(args.class_name, {
      include: args.include,
      applyCanonicalFilter: args.apply_canonical_filter,
      injectTenant: false,
    });
    let row: Record<string, unknown> | undefined;
    if (Object.keys(plan.where).length) {
      // Filters apply: fetch by id through the filtered query, so a filtered-out row looks missing.
      const rows = await data.find(
        args.class_name,
        {
          where: andWhere(plan.where, { objectId: args.object_id }),
          keys: plan.keys,
          include: plan.include,
          limit: 1,
        },
        signal,
      );
      row = rows[0];
    } else {
      row = await data.get(
        args.class_name,
        args.object_id,
        { keys: plan.keys, include: plan.include },
        signal,
      );
    }
    if (!row) throw objectNotFound(args.class_name, args.object_id);
    if (plan.tenant && !rowInTenant(row, plan.tenant)) throw tenantMismatch(args.class_name);
    return formatObjectResult(
      args.class_name,
      access.redactRows(row, args.class_name),
      plan.truncatedIncludeFields,
    );
  },
};
