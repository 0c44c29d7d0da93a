import { AgentValidationError } from '../core/errors';
import type { ParseAgent } from '../agent/parse-agent';
import { isPlainRecord } from '../core/plain-object';
import { MAX_TOOL_RESPONSE_BYTES } from '../format/response-size-cap';
import { McpMethodError } from './mcp-method-error';
import { JSON_RPC_ERROR_CODES } from './protocol.constants';
import { assertAuthorized, assertLimiterAvailable, compactJson } from './tool-call-result';

import { parseResourceUri, type ResourceKind } from './resource-uri';

const MIME_TYPE = 'application/json';
const SAMPLE_LIMIT = 5;
/** Rows a query resource holds (its where narrows them; `query_class` pages further). */
export const QUERY_RESOURCE_LIMIT = 50;

/** Tool failures that are the server's (or Parse Server's), with the JSON-RPC code each answers. */
const SERVER_SIDE_FAILURES: Readonly<Record<string, number>> = {
  timeout: JSON_RPC_ERROR_CODES.internalError,
  parse_error: JSON_RPC_ERROR_CODES.internalError,
  internal_error: JSON_RPC_ERROR_CODES.internalError,
  cancelled: JSON_RPC_ERROR_CODES.internalError,
  rate_limited: JSON_RPC_ERROR_CODES.serverBusy,
};

export interface McpResource {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
}

export interface McpResourceTemplate {
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: string;
}

export interface McpResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

/** The kinds listed per class (the query resource is a template only). */
const RESOURCE_KINDS: ReadonlyArray<{
  kind: Exclude<ResourceKind, 'query'>;
  templateName: string;
  describe: (className: string) => string;
  templateDescription: string;
}> = [
  {
    kind: 'schema',
    templateName: 'Parse class schema',
    describe: (c) => `Fields and types of the ${c} class.`,
    templateDescription: 'Fields and types of a Parse class, as the agent may see them.',
  },
  {
    kind: 'count',
    templateName: 'Parse class object count',
    describe: (c) => `How many ${c} objects the agent can see.`,
    templateDescription: 'How many objects of a Parse class the agent can see.',
  },
  {
    kind: 'samples',
    templateName: 'Parse class sample objects',
    describe: (c) => `The ${SAMPLE_LIMIT} most recently created ${c} objects.`,
    templateDescription: `The ${SAMPLE_LIMIT} most recently created objects of a Parse class.`,
  },
];

/**
 * `resources/list`: three resources per class the agent can see (`get_all_schemas` already leaves
 * out hidden and filtered classes). If the agent cannot list schemas, the list is empty.
 */
export async function listResources(
  agent: ParseAgent,
  signal?: AbortSignal,
): Promise<{ resources: McpResource[] }> {
  const envelope = await agent.execute('get_all_schemas', {}, { signal });
  assertAuthorized(envelope);
  if (!envelope.success || !isPlainRecord(envelope.data)) return { resources: [] };
  const data = envelope.data;
  const entries = [data.custom, data.built_in].some(Array.isArray)
    ? [data.custom, data.built_in]
    : [data.classes];
  const names = entries
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .map((entry) => (isPlainRecord(entry) ? entry.name : entry))
    .filter((name): name is string => typeof name === 'string' && name.length > 0);
  return {
    resources: names.flatMap((className) =>
      RESOURCE_KINDS.map(({ kind, describe }) => ({
        uri: `parse://${className}/${kind}`,
        name: `${className} ${kind}`,
        description: describe(className),
        mimeType: MIME_TYPE,
      })),
    ),
  };
}

/** The query resource: readable, and subscribable where LiveQuery is configured. */
const QUERY_TEMPLATE: McpResourceTemplate = {
  uriTemplate: 'parse://{className}/query{?where,keys}',
  name: 'Parse class query',
  description: `Up to ${QUERY_RESOURCE_LIMIT} objects of a Parse class matching where (a URI-encoded JSON object of Parse constraints), with only keys (comma-separated) when given; the agent's tenant, filters and field allowlist apply.`,
  mimeType: MIME_TYPE,
};

/** `resources/templates/list`: static, so it never reveals which classes exist. */
export function listResourceTemplates(): { resourceTemplates: McpResourceTemplate[] } {
  return {
    resourceTemplates: [
      ...RESOURCE_KINDS.map(({ kind, templateName, templateDescription }) => ({
        uriTemplate: `parse://{className}/${kind}`,
        name: templateName,
        description: templateDescription,
        mimeType: MIME_TYPE,
      })),
      { ...QUERY_TEMPLATE },
    ],
  };
}

/** The tool call that reads a resource (the same one its subscription checks with). */
export function resourceReadCall(
  resource: ReturnType<typeof parseResourceUri>,
): [string, Record<string, unknown>] {
  const { className } = resource;
  switch (resource.kind) {
    case 'schema':
      return ['get_schema', { class_name: className }];
    case 'count':
      return ['count_objects', { class_name: className }];
    case 'samples':
      return ['get_sample_objects', { class_name: className, limit: SAMPLE_LIMIT }];
    case 'query':
      return [
        'query_class',
        {
          class_name: className,
          limit: QUERY_RESOURCE_LIMIT,
          ...(resource.where ? { where: resource.where } : {}),
          ...(resource.keys ? { keys: resource.keys } : {}),
        },
      ];
  }
}

/**
 * `resources/read`: validates the URI before any tool runs, then reads through the agent's
 * ordinary tools, so hidden classes, class filters, ACLs and redaction apply exactly as for
 * `tools/call`. A refused or failed read answers with the tool's own error text and nothing else.
 */
export async function readResource(
  uri: unknown,
  agent: ParseAgent,
  options: { signal?: AbortSignal; maxBytes?: number } = {},
): Promise<{ contents: McpResourceContents[] }> {
  const requested = uriText(uri);
  const [tool, args] = resourceReadCall(parseResourceUri(requested));
  const envelope = await agent.execute(tool, args, { signal: options.signal });
  assertReadSucceeded(envelope);

  const text = compactJson(envelope.data);
  const maxBytes = options.maxBytes ?? MAX_TOOL_RESPONSE_BYTES;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new AgentValidationError(
      `Resource ${requested} is ${bytes} bytes, more than the ${maxBytes}-byte limit; read it with tools instead (get_schema, or query_class with keys: and a lower limit:).`,
    );
  }
  return { contents: [{ uri: requested, mimeType: MIME_TYPE, text }] };
}

/**
 * A resource's read failed: throws what the client is told. 401 and an unavailable limiter as
 * everywhere; a slow or failing server with its own code; else -32602 with the tool's text (the
 * client named something it cannot read: unknown, hidden, filtered), so nothing more leaks here.
 */
export function assertReadSucceeded(
  envelope: Awaited<ReturnType<ParseAgent['execute']>>,
): asserts envelope is Extract<typeof envelope, { success: true }> {
  assertAuthorized(envelope);
  assertLimiterAvailable(envelope);
  if (envelope.success) return;
  const serverSide = SERVER_SIDE_FAILURES[envelope.error_code];
  if (serverSide !== undefined) throw new McpMethodError(serverSide, envelope.error);
  throw new AgentValidationError(envelope.error);
}

/** The URI as the client sent it, for matching and for the error message; never throws. */
function uriText(uri: unknown): string {
  if (uri === undefined || uri === null) return '';
  if (typeof uri === 'string') return uri;
  if (typeof uri === 'number' || typeof uri === 'boolean') return String(uri);
  try {
    return JSON.stringify(uri) ?? '';
  } catch {
    return '';
  }
}
