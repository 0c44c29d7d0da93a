/** Minimal master-key client for Parse's REST API, used by the demo to seed and inspect its data. */
export class ParseAdminClient {
  constructor(
    private readonly serverURL: string,
    private readonly appId: string,
    private readonly masterKey: string,
  ) {}

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T> {
    const res = await fetch(this.serverURL + path, {
      method,
      headers: {
        'X-Parse-Application-Id': this.appId,
        'X-Parse-Master-Key': this.masterKey,
        'Content-Type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (!res.ok) {
      throw new Error(
        `Parse ${method} ${path} failed (${res.status}): ${String(json.error ?? text)}`,
      );
    }
    return json as T;
  }

  async find(className: string, where: Record<string, unknown>, limit = 1000) {
    const q = new URLSearchParams({ where: JSON.stringify(where), limit: String(limit) });
    const res = await this.request<{ results: Array<Record<string, unknown>> }>(
      'GET',
      `/classes/${className}?${q.toString()}`,
    );
    return res.results;
  }

  /** An exact count: the constraint keeps PostgreSQL from answering with its planner estimate. */
  async count(className: string, where: Record<string, unknown> = {}): Promise<number> {
    const q = new URLSearchParams({
      where: JSON.stringify({ objectId: { $exists: true }, ...where }),
      count: '1',
      limit: '0',
    });
    const res = await this.request<{ count: number }>(
      'GET',
      `/classes/${className}?${q.toString()}`,
    );
    return res.count;
  }

  /** Creates rows through /batch, 50 per request; returns their objectIds in order. */
  async createMany(className: string, rows: Array<Record<string, unknown>>): Promise<string[]> {
    const mount = new URL(this.serverURL).pathname.replace(/\/+$/, '');
    const ids: string[] = [];
    for (let i = 0; i < rows.length; i += 50) {
      const requests = rows
        .slice(i, i + 50)
        .map((body) => ({ method: 'POST', path: `${mount}/classes/${className}`, body }));
      const res = await this.request<Array<{ success?: { objectId: string }; error?: unknown }>>(
        'POST',
        '/batch',
        { requests },
      );
      for (const item of res) {
        if (!item.success)
          throw new Error(`Creating ${className} rows failed: ${JSON.stringify(item.error)}`);
        ids.push(item.success.objectId);
      }
    }
    return ids;
  }

  async schemaExists(className: string): Promise<boolean> {
    return this.request('GET', `/schemas/${className}`).then(
      () => true,
      () => false,
    );
  }

  /** Creates the class with these fields and CLP, or brings an existing one up to date. */
  async upsertSchema(
    className: string,
    fields: Record<string, Record<string, unknown>>,
    classLevelPermissions: Record<string, unknown>,
  ): Promise<void> {
    if (!(await this.schemaExists(className))) {
      await this.request('POST', `/schemas/${className}`, {
        className,
        fields,
        classLevelPermissions,
      });
      return;
    }
    const current = await this.request<{ fields: Record<string, unknown> }>(
      'GET',
      `/schemas/${className}`,
    );
    const missing = Object.fromEntries(
      Object.entries(fields).filter(([k]) => !(k in current.fields)),
    );
    await this.request('PUT', `/schemas/${className}`, {
      className,
      fields: missing,
      classLevelPermissions,
    });
  }

  async purge(className: string): Promise<void> {
    if (await this.schemaExists(className)) await this.request('DELETE', `/purge/${className}`);
  }
}
