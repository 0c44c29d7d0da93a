import { AgentValidationError } from '../core/errors';
import { isPlainRecord } from '../core/plain-object';

/** What a `parse://` resource URI names. */
export type ResourceKind = 'schema' | 'count' | 'samples' | 'query';

export interface ParsedResourceUri {
  /** The URI as the client sent it: notifications carry it back unchanged. */
  uri: string;
  className: string;
  kind: ResourceKind;
  /** `query` only: the caller's constraints (a JSON object), before the read policy adds its own. */
  where?: Record<string, unknown>;
  /** `query` only: the fields asked for. */
  keys?: string[];
}

/** `parse://<ClassName>[/schema|count|samples]`, or `/query` with `?where=<json>&keys=a,b`. */
const URI_PATTERN =
  /^parse:\/\/([A-Za-z_][A-Za-z0-9_]*)(?:\/(schema|count|samples|query))?(\?.*)?$/;

/** The query resource's parameters, as the resource template names them. */
const QUERY_PARAMETERS = ['where', 'keys'] as const;

/** The longest URI accepted (a where is bounded again by the read policy's cost limits). */
const MAX_URI_LENGTH = 8192;

/**
 * Parses a resource URI, refusing anything malformed with a message naming what is accepted.
 * Only `query` takes parameters; its `where` is JSON and its `keys` a comma-separated list.
 */
export function parseResourceUri(uri: unknown): ParsedResourceUri {
  const text = typeof uri === 'string' ? uri : '';
  if (text.length > MAX_URI_LENGTH) {
    throw new AgentValidationError(
      `Invalid resource URI: longer than ${MAX_URI_LENGTH} characters.`,
    );
  }
  const match = URI_PATTERN.exec(text);
  if (!match) {
    // The URI and nothing more: resources/templates/list says what is accepted.
    throw new AgentValidationError(`Invalid resource URI: ${text}`);
  }
  const className = match[1];
  const kind = (match[2] ?? 'schema') as ResourceKind;
  const search = match[3];
  if (kind !== 'query') {
    if (search !== undefined) {
      throw new AgentValidationError(
        `Invalid resource URI: ${text}. Only parse://<Class>/query takes parameters (where, keys).`,
      );
    }
    return { uri: text, className, kind };
  }
  return { uri: text, className, kind, ...queryParameters(text, search ?? '') };
}

function queryParameters(
  text: string,
  search: string,
): { where?: Record<string, unknown>; keys?: string[] } {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(search.slice(1));
  } catch {
    throw new AgentValidationError(`Invalid resource URI: ${text}. Its query string is malformed.`);
  }
  const out: { where?: Record<string, unknown>; keys?: string[] } = {};
  for (const name of new Set(params.keys())) {
    if (!(QUERY_PARAMETERS as readonly string[]).includes(name)) {
      throw new AgentValidationError(
        `Invalid resource URI: unknown parameter '${name}'. parse://<Class>/query accepts ${QUERY_PARAMETERS.join(' and ')}.`,
      );
    }
    if (params.getAll(name).length > 1) {
      throw new AgentValidationError(`Invalid resource URI: '${name}' is given more than once.`);
    }
  }
  const where = params.get('where');
  if (where !== null && where !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(where);
    } catch {
      throw new AgentValidationError(
        'Invalid resource URI: where must be a JSON object (URI-encoded), e.g. where=%7B%22status%22%3A%22paid%22%7D.',
      );
    }
    if (!isPlainRecord(parsed)) {
      throw new AgentValidationError('Invalid resource URI: where must be a JSON object.');
    }
    out.where = parsed;
  }
  const keys = params.get('keys');
  if (keys !== null && keys !== '') {
    const list = keys.split(',').map((k) => k.trim());
    if (list.some((k) => !k)) {
      throw new AgentValidationError(
        'Invalid resource URI: keys must be a comma-separated list of field names, e.g. keys=status,total.',
      );
    }
    out.keys = [...new Set(list)];
  }
  return out;
}
