/**
 * What the server asks the human through the MCP client (`elicitation/create`). The schema is the
 * restricted JSON Schema MCP allows: a flat object of primitive properties.
 */
export interface ElicitationRequest {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

/** The client's answer: the human accepted (with content), declined, or dismissed the prompt. */
export interface ElicitationResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/**
 * A way back to the human during one tool call. The transport provides it only when the client
 * declared the `elicitation` capability and can answer on this call (Streamable HTTP: an SSE call
 * of a session that declared it); otherwise the tool sees none.
 */
export interface ElicitationChannel {
  elicit(request: ElicitationRequest, signal?: AbortSignal): Promise<ElicitationResult>;
}
