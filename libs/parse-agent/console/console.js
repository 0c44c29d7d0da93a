// Parse Agent console: plain script, no build step. Everything from the server is written with
// textContent / setAttribute (never innerHTML): row values are untrusted data.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const MAX_ACTIVITY_ROWS = 200;
  const MAX_TABLE_COLUMNS = 12;

  /** Builds an element: attrs set as attributes (testid -> data-testid), children as text. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'testid') el.setAttribute('data-testid', v);
      else if (k === 'onclick') el.addEventListener('click', v);
      else if (k === 'onchange') el.addEventListener('change', v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
  }
  function append(el, children) {
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const text = (v) =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

  // Counters of async redraws, so a slow answer never paints over a newer view.
  const state = { identities: [], active: -1, compare: -1, tools: [], nextId: 1, policyRenders: 0, toolLoads: 0 };

  async function api(identity, method, path, body) {
    const headers = { Accept: 'application/json', ...(identity ? identity.headers : {}) };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    let json;
    try {
      json = res.status === 204 ? undefined : await res.json();
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const msg = json && (json.message || json.error);
      const err = new Error(`${res.status}: ${typeof msg === 'string' ? msg : res.statusText || 'refused'}`);
      err.status = res.status;
      throw err;
    }
    return json;
  }

  // ---- identities --------------------------------------------------------------------------
  async function addIdentity(headers, fallbackLabel) {
    const identity = { id: state.nextId++, headers, label: fallbackLabel };
    identity.info = await api(identity, 'GET', 'api/identity');
    identity.label = identity.info.caller.label || fallbackLabel;
    state.identities.push(identity);
    if (identity.info.operator) startActivity(identity);
    setActive(state.identities.length - 1);
  }

  function removeIdentity(index) {
    const [gone] = state.identities.splice(index, 1);
    if (gone && gone.stream) gone.stream.abort();
    // A user's Parse session ends with it; the operator key is simply forgotten.
    if (gone && gone.headers.Authorization)
      api(gone, 'POST', 'api/sign-out').catch((error) => {
        $('login-error').textContent = `Signing ${gone.label} out failed: ${error.message}`;
      });
    if (index < state.active || state.active >= state.identities.length) state.active -= 1;
    state.compare = -1;
    setActive(state.active);
  }

  function setActive(index) {
    state.active = index;
    if (state.compare === index) state.compare = -1;
    renderIdentities();
    renderPolicy();
    loadTools();
    renderActivityStatus();
    announceActive();
  }

  /** Other panels of the page (console-live.js) follow the active identity through this event. */
  function announceActive() {
    const who = activeIdentity();
    const detail = who ? { id: who.id, label: who.label, headers: who.headers } : null;
    document.dispatchEvent(new CustomEvent('parse-agent:active-identity', { detail }));
  }

  const activeIdentity = () => state.identities[state.active];

  function filtersText(filters) {
    const entries = Object.entries(filters || {});
    return entries.length ? entries.map(([c, f]) => `${c}: ${f.join(', ')}`).join('; ') : 'none';
  }
  function listText(filter) {
    if (!filter) return 'all';
    const parts = [];
    if (filter.only) parts.push(`only ${filter.only.join(', ')}`);
    if (filter.except) parts.push(`except ${filter.except.join(', ')}`);
    return parts.length ? parts.join('; ') : 'all';
  }

  function writesText(agent) {
    if (agent.permissions === 'readonly') return 'none (readonly tier)';
    const raw = agent.allow_mutations ? 'methods and raw writes' : 'agent methods only';
    return `${raw}${agent.confirmation_required ? ', each confirmed' : ''}`;
  }

  function renderIdentities() {
    const box = $('identities');
    box.replaceChildren();
    state.identities.forEach((identity, i) => {
      const { caller, agent, operator } = identity.info;
      box.append(
        h('div', { class: `card${i === state.active ? ' active' : ''}`, testid: 'identity-card' },
          h('strong', {}, caller.label),
          h('span', { class: 'muted' }, caller.kind === 'operator' ? ' (operator key)' : ` (${caller.kind}${operator ? ', operator' : ''})`),
          h('dl', { class: 'facts' },
            h('dt', {}, 'Acts for'), h('dd', { testid: 'identity-acts-for' }, `${caller.label}${caller.userId ? ` · user ${caller.userId}` : ''}`),
            h('dt', {}, 'Tier'), h('dd', { testid: 'identity-tier' }, agent.permissions),
            h('dt', {}, 'Tenant'), h('dd', { testid: 'identity-tenant' }, agent.tenant_id === null ? 'none (not tenant-bound)' : text(agent.tenant_id)),
            h('dt', {}, 'Auth'), h('dd', {}, `${agent.auth.mode}${agent.auth.fingerprint ? ` · token ${agent.auth.fingerprint}…` : ''}`),
            h('dt', {}, 'Filters'), h('dd', { testid: 'identity-filters' }, filtersText(agent.filters)),
            h('dt', {}, 'Classes'), h('dd', {}, listText(agent.classes)),
            h('dt', {}, 'Tools'), h('dd', {}, `${agent.tools.effective.length} allowed`),
            h('dt', {}, 'Writes'), h('dd', {}, writesText(agent)),
          ),
          h('button', { type: 'button', class: 'secondary', testid: 'identity-use', disabled: i === state.active, onclick: () => setActive(i) }, i === state.active ? 'Active' : 'Use'),
          ' ',
          h('button', { type: 'button', class: 'secondary', testid: 'identity-remove', onclick: () => removeIdentity(i) }, 'Sign out'),
        ),
      );
    });
    const who = activeIdentity();
    $('whoami').textContent = who
      ? `Agent acts for ${who.label} · ${who.info.agent.permissions} · tenant ${who.info.agent.tenant_id ?? 'none'}`
      : 'Not signed in';
    const compare = $('policy-compare');
    compare.replaceChildren(h('option', { value: '' }, 'nobody'));
    state.identities.forEach((identity, i) => {
      if (i !== state.active)
        compare.append(h('option', { value: String(i), selected: i === state.compare }, identity.label));
    });
  }

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('login-error').textContent = '';
    try {
      const signed = await api(undefined, 'POST', 'api/sign-in', {
        username: $('login-username').value,
        password: $('login-password').value,
      });
      $('login-password').value = '';
      try {
        await addIdentity({ Authorization: `Bearer ${signed.session_token}` }, signed.username);
        // Signed in: the box is ready for the next person, not prefilled with this one.
        $('login-username').value = '';
      } catch (error) {
        $('login-error').textContent = `Parse Server accepted ${signed.username}, but this application gives them no agent (${error.message}); for example they belong to no tenant.`;
      }
    } catch (error) {
      $('login-error').textContent = `Sign-in failed: ${error.message}`;
    }
  });

  $('key-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('login-error').textContent = '';
    try {
      await addIdentity({ 'X-MCP-API-Key': $('login-key').value }, 'operator');
      $('login-key').value = '';
    } catch (error) {
      $('login-error').textContent = `Operator key refused: ${error.message}`;
    }
  });

  // ---- tabs --------------------------------------------------------------------------------
  for (const tab of document.querySelectorAll('nav [data-tab]')) {
    tab.addEventListener('click', () => {
      for (const other of document.querySelectorAll('nav [data-tab]')) {
        const on = other === tab;
        other.setAttribute('aria-selected', String(on));
        $(`tab-${other.dataset.tab}`).hidden = !on;
      }
    });
  }

  // ---- policy view -------------------------------------------------------------------------
  $('policy-compare').addEventListener('change', (event) => {
    state.compare = event.target.value === '' ? -1 : Number(event.target.value);
    renderPolicy();
  });

  async function renderPolicy() {
    const box = $('policy-columns');
    const shown = [state.active, state.compare].filter((i) => i >= 0 && state.identities[i]);
    if (!shown.length) {
      box.replaceChildren(h('p', { class: 'muted' }, 'Sign in to see what the agent may reach.'));
      return;
    }
    const render = ++state.policyRenders;
    box.replaceChildren(...shown.map(() => h('div', { testid: 'policy-column' }, h('p', { class: 'muted' }, 'Loading…'))));
    await Promise.all(
      shown.map(async (index, column) => {
        const identity = state.identities[index];
        let content;
        try {
          identity.policy = identity.policy || (await api(identity, 'GET', 'api/policy'));
          content = policyColumn(identity);
        } catch (error) {
          content = h('p', { class: 'error' }, `Policy unavailable: ${error.message}`);
        }
        if (render === state.policyRenders) box.children[column]?.replaceChildren(content);
      }),
    );
  }

  function withheldText(c) {
    const named = c.fields_withheld.map((f) => `${f.name} (${f.reason === 'protected' ? "Parse's protectedFields" : 'not allowlisted'})`);
    // A user's agent never learns the names outside the allowlist: only how many there are.
    if (c.not_allowlisted_count && !c.fields_withheld.some((f) => f.reason === 'not_allowlisted'))
      named.push(`${c.not_allowlisted_count} outside the allowlist (names shown to the operator)`);
    return named.join(', ') || 'none';
  }

  function policyColumn(identity) {
    const { classes, tools, unnamed_refused_tools: unnamed } = identity.policy;
    return h('div', {},
      h('h3', {}, `${identity.label} (${identity.info.agent.permissions}, tenant ${identity.info.agent.tenant_id ?? 'none'})`),
      h('h4', {}, 'Classes'),
      classes.map((c) =>
        h('details', { testid: 'policy-class', 'data-class': c.class_name },
          h('summary', {}, h('strong', {}, c.class_name), ' ',
            c.accessible ? h('span', { class: 'ok' }, 'reachable') : h('span', { class: 'no' }, `out of reach: ${c.reason || ''}`)),
          c.accessible && h('dl', { class: 'facts' },
            h('dt', {}, 'Fields given'), h('dd', { testid: 'fields-given' }, c.fields_given.join(', ') || 'none'),
            h('dt', {}, 'Fields withheld'),
            h('dd', { testid: 'fields-withheld' },
              withheldText(c)),
            h('dt', {}, 'Tenant scope'), h('dd', { testid: 'tenant-scope' }, c.tenant_scope ? `${c.tenant_scope.field} = ${text(c.tenant_scope.value)}` : 'none'),
            h('dt', {}, 'Canonical filter'), h('dd', {}, c.canonical_filter ? text(c.canonical_filter) : 'none'),
            h('dt', {}, 'Agent filter on'), h('dd', {}, c.agent_filter_fields.join(', ') || 'none'),
            h('dt', {}, 'Methods'), h('dd', {}, c.methods.join(', ') || 'none'),
            c.tools_refused.length > 0 && [h('dt', {}, 'Tools refused here'), h('dd', {}, c.tools_refused.map((t) => `${t.tool} (${t.reason})`).join(', '))],
          ),
        ),
      ),
      h('h4', {}, 'Tools'),
      h('p', { testid: 'policy-tools-allowed' }, h('span', { class: 'ok' }, `Allowed (${tools.filter((t) => t.allowed).length}): `),
        tools.filter((t) => t.allowed).map((t) => t.name).join(', ') || 'none'),
      h('table', { testid: 'policy-tools' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Refused tool'), h('th', {}, 'Tier'), h('th', {}, 'Why not'))),
        h('tbody', {},
          tools.filter((t) => !t.allowed).map((t) =>
            h('tr', { 'data-tool': t.name },
              h('td', {}, t.name),
              h('td', {}, t.permission),
              h('td', { class: 'no' }, `${t.reason}${t.denied_at ? ` (at ${t.denied_at})` : ''}`),
            ),
          ),
        ),
      ),
      unnamed > 0 && h('p', { class: 'muted', testid: 'policy-tools-unnamed' }, `${unnamed} more of the application's own tools refused (names shown to the operator).`),
    );
  }

  // ---- try it ------------------------------------------------------------------------------
  async function loadTools() {
    const select = $('tool-select');
    const identity = activeIdentity();
    select.replaceChildren();
    state.tools = [];
    if (!identity) return renderForm();
    const load = ++state.toolLoads;
    let tools = [];
    try {
      tools = await api(identity, 'GET', 'api/tools');
    } catch (error) {
      $('tool-result').replaceChildren(h('p', { class: 'error' }, `Tools unavailable: ${error.message}`));
    }
    if (load !== state.toolLoads) return;
    state.tools = tools;
    select.replaceChildren();
    for (const tool of state.tools) select.append(h('option', { value: tool.name }, tool.name));
    renderForm();
  }

  function currentTool() {
    return state.tools.find((t) => t.name === $('tool-select').value);
  }

  function renderForm() {
    const form = $('tool-form');
    form.replaceChildren();
    const tool = currentTool();
    $('tool-description').textContent = tool ? tool.description : '';
    $('tool-args').value = '{}';
    if (!tool) return;
    const schema = tool.inputSchema || {};
    const required = new Set(schema.required || []);
    for (const [name, prop] of Object.entries(schema.properties || {})) {
      const kind = fieldKind(prop);
      let input;
      if (kind === 'enum' || kind === 'boolean') {
        const values = kind === 'boolean' ? [true, false] : prop.enum;
        input = h('select', {}, h('option', { value: '' }, ''), values.map((v) => h('option', { value: JSON.stringify(v) }, text(v))));
      } else {
        input = h('input', {
          type: kind === 'number' ? 'number' : 'text',
          placeholder: kind === 'json' ? 'JSON' : prop.default !== undefined ? `default ${text(prop.default)}` : '',
        });
      }
      input.setAttribute('data-testid', `arg-${name}`);
      input.dataset.arg = name;
      input.dataset.kind = kind;
      input.title = prop.description || '';
      input.addEventListener('input', syncArgs);
      input.addEventListener('change', syncArgs);
      form.append(h('label', {}, name, required.has(name) ? ' *' : ''), input);
    }
  }

  function fieldKind(prop) {
    if (Array.isArray(prop.enum)) return 'enum';
    const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
    if (type === 'boolean') return 'boolean';
    if (type === 'integer' || type === 'number') return 'number';
    if (type === 'string') return 'string';
    return 'json';
  }

  function syncArgs() {
    const args = {};
    for (const input of $('tool-form').querySelectorAll('[data-arg]')) {
      const raw = input.value;
      if (raw === '') continue;
      const kind = input.dataset.kind;
      if (kind === 'string') args[input.dataset.arg] = raw;
      else if (kind === 'number') args[input.dataset.arg] = Number(raw);
      else {
        try {
          args[input.dataset.arg] = JSON.parse(raw);
        } catch {
          args[input.dataset.arg] = raw;
        }
      }
    }
    $('tool-args').value = JSON.stringify(args, null, 2);
  }

  /** The JSON box is the source of truth; the form follows it when it parses. */
  function syncForm() {
    let args;
    try {
      args = JSON.parse($('tool-args').value || '{}');
    } catch {
      return;
    }
    if (!args || typeof args !== 'object') return;
    for (const input of $('tool-form').querySelectorAll('[data-arg]')) {
      const v = args[input.dataset.arg];
      const kind = input.dataset.kind;
      input.value = v === undefined ? '' : kind === 'string' || kind === 'number' ? String(v) : JSON.stringify(v);
    }
  }

  $('tool-select').addEventListener('change', renderForm);
  $('tool-args').addEventListener('input', syncForm);
  $('tool-run').addEventListener('click', () => {
    let args;
    try {
      args = JSON.parse($('tool-args').value || '{}');
    } catch (error) {
      $('tool-result').replaceChildren(h('p', { class: 'error', testid: 'tool-error' }, `The arguments are not valid JSON: ${error.message}`));
      return;
    }
    run($('tool-select').value, args);
  });

  async function run(name, args, confirm) {
    const identity = activeIdentity();
    const box = $('tool-result');
    if (!identity || !name) {
      box.replaceChildren(h('p', { class: 'error' }, 'Sign in and pick a tool first.'));
      return;
    }
    $('tool-args').value = JSON.stringify(args, null, 2);
    syncForm();
    $('tool-run').disabled = true;
    box.replaceChildren(h('p', { class: 'muted' }, `Running ${name} as ${identity.label}…`));
    const started = performance.now();
    try {
      const envelope = await api(identity, 'POST', `api/tools/${encodeURIComponent(name)}`, { arguments: args, confirm });
      box.replaceChildren(renderEnvelope(name, args, envelope, Math.round(performance.now() - started)));
    } catch (error) {
      box.replaceChildren(h('p', { class: 'error', testid: 'tool-error' }, error.message));
    } finally {
      $('tool-run').disabled = false;
    }
  }

  function renderEnvelope(name, args, envelope, ms) {
    const out = h('div', {});
    if (envelope && envelope.confirmation) {
      // The tool asks a person before it changes anything: nothing ran yet.
      out.append(
        h('p', { testid: 'tool-confirmation' }, h('strong', {}, 'Needs your confirmation: '), envelope.confirmation.message),
        h('button', { type: 'button', testid: 'tool-confirm', onclick: () => run(name, args, { message: envelope.confirmation.message }) }, 'Confirm and run'),
        ' ',
        h('button', { type: 'button', class: 'secondary', testid: 'tool-cancel', onclick: () => out.replaceChildren(h('p', { class: 'muted' }, 'Not run.')) }, 'Cancel'),
      );
      return out;
    }
    if (!envelope || envelope.success !== true) {
      out.append(
        h('p', { class: 'error', testid: 'tool-error' },
          h('strong', {}, (envelope && envelope.error_code) || 'error'), ': ', text(envelope && envelope.error)),
        envelope && envelope.details !== undefined ? h('pre', {}, JSON.stringify(envelope.details, null, 2)) : '',
      );
    } else {
      const data = envelope.data;
      out.append(h('p', { class: 'muted', testid: 'result-summary' }, `${name} ok in ${ms} ms`));
      const passages = data && Array.isArray(data.chunks);
      if (data && typeof data.count === 'number')
        out.append(h('p', {}, h('span', { class: 'big', testid: 'result-count' }, data.count.toLocaleString('en-US')), passages ? ' passages' : ` ${data.class_name || ''} objects`));
      if (passages) out.append(rowsTable(passageRows(data)));
      if (data && Array.isArray(data.groups))
        out.append(chart(data.groups), h('details', {}, h('summary', {}, `Table (${data.groups.length} groups)`), rowsTable(data.groups)));
      if (data && Array.isArray(data.results)) out.append(pager(name, args, data), rowsTable(data.results));
      if (data && typeof data.output === 'string') out.append(h('pre', {}, data.output));
    }
    out.append(h('details', {}, h('summary', {}, 'Envelope (as the agent sees it)'), h('pre', { testid: 'result-json' }, JSON.stringify(envelope, null, 2))));
    return out;
  }

  /** semantic_search: the passages best first, each beside its row's fields from `documents`. */
  function passageRows(data) {
    return data.chunks.map((c) => {
      const row = { ...c };
      const doc = (data.documents && data.documents[c && c.object_id]) || {};
      for (const [k, v] of Object.entries(doc)) if (k !== 'objectId' && !(k in row)) row[k] = v;
      return row;
    });
  }

  function rowsTable(rows) {
    const columns = [];
    for (const row of rows.slice(0, 50))
      for (const key of Object.keys(row || {}))
        if (!columns.includes(key) && columns.length < MAX_TABLE_COLUMNS) columns.push(key);
    return h('div', { class: 'scroll' },
      h('table', { testid: 'result-table' },
        h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c)))),
        h('tbody', {}, rows.map((row) => h('tr', { testid: 'result-row' }, columns.map((c) => h('td', { title: text(row[c]) }, text(row[c])))))),
      ),
    );
  }

  function pager(name, args, data) {
    const p = data.pagination || {};
    const skip = Number(p.skip) || 0;
    const count = data.results.length;
    const limit = Number(p.limit) || count || 1;
    const next = data.next_call && data.next_call.arguments ? data.next_call.arguments : { ...args, skip: skip + count };
    return h('p', { testid: 'result-pager' },
      h('button', { type: 'button', class: 'secondary', testid: 'result-prev', disabled: skip === 0, onclick: () => run(name, { ...args, skip: Math.max(0, skip - limit) }) }, '‹ Previous'),
      ` rows ${count ? skip + 1 : 0}–${skip + count}${p.has_more ? ', more available ' : ' '}`,
      h('button', { type: 'button', class: 'secondary', testid: 'result-next', disabled: !p.has_more, onclick: () => run(name, next) }, 'Next ›'),
    );
  }

  /** group_by / group_by_date results as horizontal bars (inline SVG, labels as text nodes). */
  function chart(groups) {
    const shown = groups.slice(0, 40);
    const max = Math.max(1, ...shown.map((g) => Number(g.value) || 0));
    const rowH = 20;
    const labelW = 160;
    const barW = 360;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('width', String(labelW + barW + 80));
    svg.setAttribute('height', String(shown.length * rowH + 4));
    svg.setAttribute('data-testid', 'result-chart');
    svg.setAttribute('role', 'img');
    shown.forEach((g, i) => {
      const y = i * rowH + 2;
      const value = Number(g.value) || 0;
      const label = document.createElementNS(SVG, 'text');
      label.setAttribute('x', String(labelW - 6));
      label.setAttribute('y', String(y + 14));
      label.setAttribute('text-anchor', 'end');
      label.textContent = text(g.key).slice(0, 24);
      const bar = document.createElementNS(SVG, 'rect');
      bar.setAttribute('x', String(labelW));
      bar.setAttribute('y', String(y + 3));
      bar.setAttribute('height', String(rowH - 6));
      bar.setAttribute('width', String(Math.max(1, (value / max) * barW)));
      bar.setAttribute('fill', '#2855c5');
      const num = document.createElementNS(SVG, 'text');
      num.setAttribute('x', String(labelW + Math.max(1, (value / max) * barW) + 4));
      num.setAttribute('y', String(y + 14));
      num.textContent = value.toLocaleString('en-US');
      svg.append(label, bar, num);
    });
    return svg;
  }

  // ---- activity (operator) -----------------------------------------------------------------
  function renderActivityStatus() {
    const operator = state.identities.find((i) => i.info.operator);
    $('activity-status').textContent = !operator
      ? 'The activity feed is for the operator: add the operator key above.'
      : operator.live
        ? `Live: tool calls and mutations of every identity (watching as ${operator.label}).`
        : 'Connecting to the activity feed…';
  }

  function setActivityLive(identity) {
    identity.live = true;
    renderActivityStatus();
  }

  async function startActivity(identity) {
    const controller = new AbortController();
    identity.stream = controller;
    renderActivityStatus();
    try {
      const res = await fetch('api/activity', {
        headers: { ...identity.headers, Accept: 'text/event-stream' },
        signal: controller.signal,
        credentials: 'omit',
        cache: 'no-store',
      });
      if (!res.ok || !res.body) throw new Error(`${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split('\n');
          const event = (lines.find((l) => l.startsWith('event: ')) || '').slice(7);
          const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          if (event === 'live') setActivityLive(identity);
          else if (event === 'activity' && data) addActivity(JSON.parse(data));
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) $('activity-status').textContent = `The activity feed stopped: ${error.message}`;
    }
  }

  function mutationText(entry) {
    const what = entry.method || `${entry.action} ${entry.class_name || ''}`;
    const keys = entry.changed_keys && entry.changed_keys.length ? entry.changed_keys.join(', ') : 'no fields';
    return `${what} wrote ${keys}`;
  }

  function addActivity(entry) {
    const body = $('activity-feed').tBodies[0];
    body.prepend(
      h('tr', { testid: 'activity-row', 'data-kind': entry.kind, class: entry.outcome === 'ok' || entry.outcome === 'changed' ? '' : 'no' },
        h('td', {}, new Date(entry.at).toLocaleTimeString([], { hour12: false })),
        h('td', { testid: 'activity-actor' }, entry.actor),
        h('td', { testid: 'activity-tool', class: 'wrap' }, entry.kind === 'mutation' ? mutationText(entry) : entry.tool),
        h('td', { testid: 'activity-outcome' }, entry.outcome),
        h('td', {}, entry.duration_ms === undefined ? '' : String(entry.duration_ms)),
        h('td', {}, `${entry.auth_type} (${entry.permissions})`),
      ),
    );
    while (body.rows.length > MAX_ACTIVITY_ROWS) body.deleteRow(body.rows.length - 1);
  }
})();
