// Parse Agent console, live count: the active identity's count of one class, kept current by a
// real resource subscription on the server (api/live/<Class>, server-sent events). Plain script,
// no build step; everything from the server is written with textContent.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  // `load` counts identity changes, so a slow answer never shows for an identity no longer active.
  const live = { identity: null, stream: null, load: 0, updates: 0 };

  // console.js announces every change of the active identity (null: nobody signed in).
  document.addEventListener('parse-agent:active-identity', (event) => follow(event.detail));
  $('live-class').addEventListener('change', () => {
    stop();
    watch();
  });

  function status(message, isError) {
    const line = $('live-status');
    line.textContent = message;
    line.className = isError ? 'error' : 'muted';
  }

  function stop() {
    if (live.stream) live.stream.abort();
    live.stream = null;
  }

  /** Shows the panel for this identity, or hides it: no liveQuery, or no class it may count. */
  async function follow(identity) {
    if (identity && live.identity && identity.id === live.identity.id) return;
    stop();
    live.identity = identity;
    const load = ++live.load;
    $('live-panel').hidden = true;
    if (!identity) return;
    let info;
    try {
      const res = await fetch('api/live', {
        headers: { ...identity.headers, Accept: 'application/json' },
        credentials: 'omit',
        cache: 'no-store',
      });
      info = res.ok ? await res.json() : undefined;
    } catch {
      info = undefined;
    }
    if (load !== live.load || !info || !info.available || !info.class_names.length) return;
    const select = $('live-class');
    const previous = select.value;
    select.replaceChildren();
    for (const name of info.class_names) {
      const option = document.createElement('option');
      option.value = name;
      option.textContent = name;
      select.append(option);
    }
    if (info.class_names.includes(previous)) select.value = previous;
    $('live-panel').hidden = false;
    watch();
  }

  async function watch() {
    const identity = live.identity;
    const className = $('live-class').value;
    if (!identity || !className) return;
    const controller = new AbortController();
    live.stream = controller;
    live.updates = 0;
    $('live-count').textContent = '…';
    $('live-count').dataset.updates = '0';
    status(`Subscribing to ${className} as ${identity.label}…`);
    try {
      const res = await fetch(`api/live/${encodeURIComponent(className)}`, {
        headers: { ...identity.headers, Accept: 'text/event-stream' },
        signal: controller.signal,
        credentials: 'omit',
        cache: 'no-store',
      });
      if (!res.ok || !res.body) throw new Error(await refusal(res));
      await readEvents(res.body, (event, data) => {
        if (event === 'count') showCount(identity, data);
        else if (event === 'problem') status(data.message, true);
      });
      if (!controller.signal.aborted) status('The live count stopped: the server closed it.', true);
    } catch (error) {
      if (!controller.signal.aborted) status(`The live count stopped: ${error.message}`, true);
    }
  }

  function showCount(identity, data) {
    live.updates += 1;
    const count = $('live-count');
    count.textContent = Number(data.count).toLocaleString('en-US');
    count.dataset.updates = String(live.updates);
    const at = new Date(data.at).toLocaleTimeString([], { hour12: false });
    status(`${data.class_name} objects ${identity.label} may read · live · updated ${at}`);
  }

  async function refusal(res) {
    let message;
    try {
      message = (await res.json()).message;
    } catch {
      message = undefined;
    }
    return `${res.status}: ${typeof message === 'string' ? message : res.statusText || 'refused'}`;
  }

  /** Calls `onEvent(name, data)` for each server-sent event of the body, until it ends. */
  async function readEvents(body, onEvent) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const lines = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const event = (lines.find((l) => l.startsWith('event: ')) || '').slice(7);
        const data = lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (event && data) onEvent(event, JSON.parse(data));
      }
    }
  }
})();
