// @ts-check
/** The trace viewer's page script: draws the tree, the timeline, the cost and the approvals from the embedded data, with plain DOM (spec/viewer.md). */

/**
 * @typedef {import('./view-data.js').ViewData} ViewData
 * @typedef {import('./view-data.js').ViewRun} ViewRun
 * @typedef {import('./view-data.js').ViewSpan} ViewSpan
 * @typedef {import('./view-data.js').ViewFigures} ViewFigures
 * @typedef {import('./view-data.js').ViewExchange} ViewExchange
 * @typedef {import('./view-data.js').ViewCall} ViewCall
 * @typedef {import('./view-data.js').ViewGroup} ViewGroup
 * @typedef {Record<string, unknown>} TraceEvent
 */

(() => {
  const dataElement = document.getElementById('trace-data');
  /** @type {ViewData} */
  const data = JSON.parse(dataElement?.textContent ?? '{}');
  /** @type {TraceEvent[]} */
  const events = /** @type {TraceEvent[]} */ (/** @type {unknown} */ (data.events));
  /** @type {Map<string, ViewRun>} */
  const runsById = new Map(data.runs.map((run) => [run.run, run]));

  /** Text safe for HTML. @param {unknown} value */
  const esc = (value) => String(value).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

  /** A count with thousands separators. @param {number} count */
  const count = (count) => count.toLocaleString('en-US');

  /** Dollars: unknown is `$?`, fractions of a cent keep their first digits. @param {number | null} usd */
  const dollars = (usd) => {
    if (usd === null) return '$?';
    if (usd === 0) return '$0';
    const decimals = usd >= 1 ? 2 : usd >= 0.0001 ? 4 : Math.min(10, 1 - Math.floor(Math.log10(usd)));
    return `$${usd.toFixed(decimals)}`;
  };

  /** A duration in ms or s. @param {number} ms */
  const duration = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`);

  /** Pretty JSON. @param {unknown} value */
  const json = (value) => JSON.stringify(value, null, 2) ?? 'undefined';

  /** A run's status as a badge. @param {ViewRun} run */
  const statusBadge = (run) => {
    const text = run.status === 'failed' ? `failed ${run.code ?? ''}` : run.status === 'cancelled' ? 'cancelled' : run.status;
    return `<span class="status status-${run.status}">${esc(text.trim())}</span>`;
  };

  /** An element by id. @param {string} id */
  const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

  // The page's frame: everything below fills it.
  const top = data.runs[0];
  document.body.innerHTML = `
<header id="summary">
  <h1>${esc(top ? top.name : 'empty trace')} <small>${esc(data.source)}</small></h1>
  <div class="cards">
    <div class="card"><b id="summary-status">${top ? statusBadge(top) : '<span class="status">no runs</span>'}</b><span>top run</span></div>
    <div class="card"><b id="summary-runs">${count(data.runs.length)}</b><span>runs</span></div>
    <div class="card"><b id="summary-events">${count(data.events.length)}</b><span>events</span></div>
    <div class="card"><b>${duration(data.durationMs)}</b><span>duration</span></div>
    <div class="card"><b id="summary-cost">${dollars(data.total.costUsd)}</b><span>${count(data.total.inputTokens + data.total.outputTokens)} tokens</span></div>
  </div>
  <div id="bad-lines"></div>
</header>
<main>
  <section id="tree-section"><h2>Delegation tree</h2><div class="filter"><input id="filter" type="search" placeholder="Filter: name, status, tool, prompt or answer text" aria-label="Filter runs" autocomplete="off"><span id="filter-count"></span></div><ul class="tree" id="tree"></ul></section>
  <section id="details-section"><h2>Details</h2><div id="details"><p class="hint">Choose a run in the tree or a bar in the timeline.</p></div></section>
  <section id="timeline-section" class="wide"><h2>Timeline <small><span class="key key-run"></span>run <span class="key key-model"></span>model call <span class="key key-call"></span>call <span class="key key-critical"></span>critical path</small></h2><div id="timeline"></div></section>
  <section id="cost-section"><h2>Cost</h2><div id="cost"></div></section>
  <section id="approvals-section"><h2>Approvals</h2><div id="approvals"></div></section>
</main>
<div id="tooltip" hidden></div>`;

  // Lines that were not trace events: named, so a killed run's last line is seen (VIEW-8).
  if (data.badLines.length > 0) {
    byId('bad-lines').innerHTML =
      `<details open class="warning"><summary>${data.badLines.length} line${data.badLines.length === 1 ? ' was' : 's were'} not trace events and ${data.badLines.length === 1 ? 'was' : 'were'} skipped</summary><ul>${data.badLines
        .map((bad) => `<li data-line="${bad.line}">line ${bad.line}: ${esc(bad.message)}</li>`)
        .join('')}</ul></details>`;
  }

  /** The call that delegated a run, when it says more than the run's name (VIEW-12). @param {ViewRun} run */
  const callText = (run) => {
    if (run.call === null || run.call === run.name) return '';
    return run.call.startsWith(`${run.name} · `) ? run.call.slice(run.name.length + 3) : run.call;
  };
  /** @param {ViewRun} run */
  const callSpan = (run) => (callText(run) === '' ? '' : `<span class="call" title="${esc(run.call)}">${esc(callText(run))}</span>`);

  // The delegation tree (VIEW-2).
  /** @param {ViewRun} run @returns {string} */
  const treeNode = (run) => {
    const children = run.children.map((id) => runsById.get(id)).filter((child) => child !== undefined);
    const classes = ['run', run.failedPath ? 'failed-path' : '', children.length > 0 ? 'has-children' : ''].filter(Boolean).join(' ');
    const tokens = run.own.inputTokens + run.own.outputTokens;
    const subtree = children.length > 0 ? `<span class="subtree" title="with its delegations">Σ ${dollars(run.subtree.costUsd)}</span>` : '';
    return `<li class="${classes}" data-run="${esc(run.run)}" data-status="${run.status}">
<div class="row"><button class="toggle" aria-label="collapse" ${children.length === 0 ? 'disabled' : ''}>${children.length === 0 ? '·' : '▾'}</button><span class="name">${esc(run.name)}</span>${callSpan(run)}${statusBadge(run)}<span class="model" title="${esc(run.model ?? '')}">${esc(run.modelLabel)}</span><span class="tier">${esc(run.tier ?? '')}</span><span class="steps" data-value="${run.own.steps}">${count(run.own.steps)} step${run.own.steps === 1 ? '' : 's'}</span><span class="tokens" data-value="${tokens}">${count(tokens)} tok</span><span class="cost" data-value="${run.own.costUsd ?? ''}">${dollars(run.own.costUsd)}</span>${subtree}</div>${children.length > 0 ? `<ul>${children.map(treeNode).join('')}</ul>` : ''}</li>`;
  };
  const roots = data.runs.filter((run) => run.parent === null || !runsById.has(run.parent));
  byId('tree').innerHTML = roots.map(treeNode).join('');
  byId('tree').addEventListener('click', (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    const item = /** @type {HTMLElement | null} */ (target.closest('li.run'));
    if (!item) return;
    if (target.closest('.toggle')) {
      const collapsed = item.classList.toggle('collapsed');
      const toggle = /** @type {HTMLElement} */ (target.closest('.toggle'));
      toggle.textContent = collapsed ? '▸' : '▾';
      toggle.setAttribute('aria-label', collapsed ? 'expand' : 'collapse');
      return;
    }
    select(item.dataset.run ?? '');
  });

  // Details of one run: its model calls and calls, each opened on demand (VIEW-5).
  /** @type {Map<string, ViewExchange[]>} */
  const exchangesByRun = new Map();
  for (const exchange of data.exchanges) {
    const list = exchangesByRun.get(exchange.run) ?? [];
    list.push(exchange);
    exchangesByRun.set(exchange.run, list);
  }
  /** @type {Map<string, ViewCall[]>} */
  const callsByRun = new Map();
  for (const call of data.calls) {
    const list = callsByRun.get(call.run) ?? [];
    list.push(call);
    callsByRun.set(call.run, list);
  }

  /** The text of a message's content. @param {unknown} content */
  const contentText = (content) => (typeof content === 'string' ? content : json(content));

  /** The inside of a model call: what was sent, the schema, the answer, retries, and why it was re-asked. @param {ViewExchange} exchange */
  const exchangeBody = (exchange) => {
    const request = exchange.request === null ? undefined : events[exchange.request];
    const response = exchange.response === null ? undefined : events[exchange.response];
    const messages = /** @type {{role: string, content: unknown, files?: unknown[]}[]} */ (Array.isArray(request?.messages) ? request.messages : []);
    const parts = [];
    if (exchange.attempt > 0 && messages.length > 0) {
      const last = messages[messages.length - 1];
      parts.push(`<div class="reask"><b>Re-asked because</b><pre>${esc(contentText(last?.content))}</pre></div>`);
    }
    for (const index of exchange.retries) {
      const retry = events[index] ?? {};
      parts.push(`<div class="retry">retry after attempt ${esc(retry.attempt)}: ${esc(retry.reason)} (waited ${esc(retry.waitMs)} ms)</div>`);
    }
    parts.push(
      request
        ? `<h4>Messages sent (${messages.length})</h4><ol class="messages">${messages
            .map(
              (message) =>
                `<li class="message" data-role="${esc(message.role)}"><span class="role">${esc(message.role)}</span>${message.files ? `<span class="files">${esc(json(message.files))}</span>` : ''}<pre>${esc(contentText(message.content))}</pre></li>`,
            )
            .join('')}</ol><details class="schema"><summary>Solution schema</summary><pre>${esc(json(request.schema))}</pre></details>`
        : '<p class="hint">The trace holds no model.request for this attempt.</p>',
    );
    if (response) {
      const answer = response.solution === null ? (response.text ?? '') : json(response.solution);
      parts.push(`<h4>Answer${response.solution === null ? ' (not JSON)' : ''}</h4><pre class="answer">${esc(answer)}</pre>`);
    } else parts.push('<p class="hint">No answer in the trace yet.</p>');
    return parts.join('');
  };

  /** The inside of a call: its parameters, approvals, delegation and result or error. @param {ViewCall} call */
  const callBody = (call) =>
    call.events
      .map((index) => {
        const event = events[index] ?? {};
        switch (event.event) {
          case 'call.started':
            return `<h4>Parameters</h4><pre class="params">${esc(json(event.params))}</pre>`;
          case 'call.completed':
            return `<h4>Result</h4><pre class="result">${esc(json(event.result))}</pre>`;
          case 'call.failed':
            return `<h4>Error</h4><pre class="error">${esc(json(event.error))}</pre>`;
          case 'call.skipped':
            return `<p>Skipped: ${esc(event.reason)}.</p>`;
          case 'approval.requested':
            return '<p>Approval asked.</p>';
          case 'approval.decided':
            return `<p>Approval: <b>${esc(event.decision)}</b>${event.by ? ` by ${esc(event.by)}` : ''}${event.reason ? ` — ${esc(event.reason)}` : ''}</p>`;
          case 'delegate.started':
            return `<p>Delegated to <a href="#" class="run-link" data-run="${esc(event.child)}">${esc(event.name)}</a> (${esc(runsById.get(String(event.child))?.request ?? event.delegate)})</p>`;
          case 'delegate.failed':
            return `<p>The delegation failed: ${esc(event.code)}: ${esc(event.message)}</p>`;
          default:
            return '';
        }
      })
      .join('');

  /** Shows one run in the details panel. @param {string} id @param {number} [focus] an event index to open */
  const select = (id, focus) => {
    const run = runsById.get(id);
    if (!run) return;
    for (const old of document.querySelectorAll('li.run.selected')) old.classList.remove('selected');
    document.querySelector(`li.run[data-run="${CSS.escape(id)}"]`)?.classList.add('selected');
    const exchanges = exchangesByRun.get(id) ?? [];
    const calls = callsByRun.get(id) ?? [];
    const failure = run.code ? `<p class="error">${esc(run.code)}: ${esc(run.message ?? '')}</p>` : '';
    byId('details').innerHTML = `<div class="run-details" data-run="${esc(run.run)}">
<h3>${esc(run.name)} ${statusBadge(run)}</h3>
<p class="meta">${esc(run.run)} · <span title="${esc(run.model ?? '')}">${esc(run.modelLabel)}</span>${run.tier ? ` · tier ${esc(run.tier)}` : ''} · <span class="request">${esc(run.request ?? '')}</span>${run.call ? ` · called as <span class="call">${esc(run.call)}</span>` : ''}</p>${failure}
<p class="meta">own: ${count(run.own.steps)} steps, ${count(run.own.inputTokens)} in / ${count(run.own.outputTokens)} out, ${dollars(run.own.costUsd)} · with delegations: ${count(run.subtree.runs)} runs, ${dollars(run.subtree.costUsd)}</p>
<h4>Model calls (${exchanges.length})</h4>${exchanges
      .map(
        (exchange, index) =>
          `<details class="exchange" data-index="${index}" data-event="${exchange.request ?? exchange.response}"><summary>step ${exchange.step}${exchange.attempt > 0 ? ` · re-ask ${exchange.attempt}` : ''}${exchangeSummary(exchange)}</summary><div class="body"></div></details>`,
      )
      .join('')}
<h4>Calls (${calls.length})</h4>${calls
      .map(
        (call, index) =>
          `<details class="call" data-index="${index}" data-call="${esc(call.call)}" data-event="${call.events[0]}"><summary>${esc(call.call)} <b>${esc(call.tool)}</b> ${esc(callEnding(call))}</summary><div class="body"></div></details>`,
      )
      .join('')}</div>`;
    const panel = byId('details');
    // Bodies are drawn when opened: a run with hundreds of steps opens at once.
    panel.querySelectorAll('details.exchange, details.call').forEach((element) => {
      element.addEventListener('toggle', () => {
        const details = /** @type {HTMLDetailsElement} */ (element);
        const body = /** @type {HTMLElement} */ (details.querySelector('.body'));
        if (!details.open || body.childElementCount > 0) return;
        const index = Number(details.dataset.index);
        body.innerHTML = details.classList.contains('exchange')
          ? exchangeBody(/** @type {ViewExchange} */ (exchanges[index]))
          : callBody(/** @type {ViewCall} */ (calls[index]));
      });
    });
    if (focus !== undefined) {
      const target = /** @type {HTMLDetailsElement | null} */ (panel.querySelector(`details[data-event="${focus}"]`));
      if (target) {
        target.open = true;
        target.scrollIntoView({ block: 'nearest' });
      }
    }
  };

  /** A model call's retries (a connection or provider failure tried again, not a re-ask), with the last one's reason (VIEW-5). @param {ViewExchange} exchange */
  const retrySummary = (exchange) => {
    const retries = exchange.retries.length;
    if (retries === 0) return '';
    const last = events[/** @type {number} */ (exchange.retries[retries - 1])] ?? {};
    return ` · ${retries === 1 ? 'retried once' : `retried ${retries} times`}: ${esc(last.reason)}`;
  };

  /** A model call's one-line summary. @param {ViewExchange} exchange */
  const exchangeSummary = (exchange) => {
    const response = exchange.response === null ? undefined : events[exchange.response];
    if (!response) return `${retrySummary(exchange)} · no answer yet`;
    const usage = /** @type {Record<string, number>} */ (response.usage ?? {});
    return `${retrySummary(exchange)} · ${esc(exchange.modelLabel)} · ${count(usage.inputTokens ?? 0)} in / ${count(usage.outputTokens ?? 0)} out · ${dollars(/** @type {number | null} */ (response.costUsd ?? null))} · ${esc(response.ms)} ms${response.solution === null ? ' · not JSON' : ''}`;
  };

  /** How a call ended, in a word. @param {ViewCall} call */
  const callEnding = (call) => {
    const last = call.events.map((index) => events[index]?.event).filter((name) => typeof name === 'string' && name.startsWith('call.'));
    const ending = last[last.length - 1];
    const child = call.child ? runsById.get(call.child) : undefined;
    const word = ending === 'call.completed' ? 'completed' : ending === 'call.failed' ? 'failed' : ending === 'call.skipped' ? 'skipped' : 'running';
    return `${word}${child ? ` → ${child.name}` : ''}`;
  };

  byId('details').addEventListener('click', (event) => {
    const link = /** @type {HTMLElement} */ (event.target).closest('a.run-link');
    if (!link) return;
    event.preventDefault();
    select(/** @type {HTMLElement} */ (link).dataset.run ?? '');
  });

  // The timeline: one row per run in order of start, its model calls and calls packed in lanes (VIEW-3).
  const span = Math.max(data.durationMs, 1);
  /** @type {Map<string, ViewSpan[]>} */
  const barsByRun = new Map();
  /** @type {ViewSpan[]} */
  const runBars = [];
  for (const bar of data.spans) {
    if (bar.kind === 'run') runBars.push(bar);
    else {
      const list = barsByRun.get(bar.run) ?? [];
      list.push(bar);
      barsByRun.set(bar.run, list);
    }
  }
  runBars.sort((a, b) => a.start - b.start);
  /** @type {ViewSpan[]} */
  const barList = [];
  /** A bar's HTML. @param {ViewSpan} bar @param {number} lane */
  const barHtml = (bar, lane) => {
    const end = bar.end ?? data.durationMs;
    const left = (bar.start / span) * 100;
    const width = Math.max(((end - bar.start) / span) * 100, 0.15);
    barList.push(bar);
    const classes = `bar bar-${bar.kind} bar-${bar.status}${bar.critical ? ' critical' : ''}${bar.end === null ? ' open' : ''}`;
    return `<div class="${classes}" data-bar="${barList.length - 1}" data-kind="${bar.kind}" data-start="${bar.start}" style="left:${left.toFixed(3)}%;width:${width.toFixed(3)}%;top:${lane * 11 + 3}px"></div>`;
  };
  const ticks = Array.from({ length: 6 }, (_, index) => `<span style="left:${index * 20}%">${duration((data.durationMs * index) / 5)}</span>`).join('');
  byId('timeline').innerHTML = `<div class="axis"><div class="label"></div><div class="track">${ticks}</div></div>${runBars
    .map((runBar) => {
      const run = runsById.get(runBar.run);
      /** @type {number[]} */
      const laneEnds = [];
      const inner = (barsByRun.get(runBar.run) ?? [])
        .sort((a, b) => a.start - b.start)
        .map((bar) => {
          const end = bar.end ?? data.durationMs;
          let lane = laneEnds.findIndex((laneEnd) => laneEnd <= bar.start);
          if (lane < 0) lane = laneEnds.push(end) - 1;
          else laneEnds[lane] = end;
          return barHtml(bar, lane + 1);
        })
        .join('');
      const height = (laneEnds.length + 1) * 11 + 6;
      return `<div class="lane-row${run?.failedPath ? ' failed-path' : ''}" data-run="${esc(runBar.run)}"><div class="label" style="padding-left:${(run?.depth ?? 0) * 12 + 4}px" title="${esc(run?.call ?? runBar.label)}"><span class="lane-name">${esc(runBar.label)}</span>${run ? callSpan(run) : ''}</div><div class="track" style="height:${height}px">${barHtml(runBar, 0)}${inner}</div></div>`;
    })
    .join('')}`;
  /** What a bar stands for, in a line: the run, the model call or the call. @param {ViewSpan} view */
  const barDetail = (view) => {
    if (view.kind === 'run') {
      const run = /** @type {ViewRun} */ (data.runs[view.ref]);
      const tokens = run.own.inputTokens + run.own.outputTokens;
      return `${run.name}${run.call ? ` · ${run.call}` : ''} (${run.run}) · ${run.modelLabel} · ${run.status}${run.code ? ` ${run.code}` : ''} · ${count(run.own.steps)} steps · ${count(tokens)} tokens · ${dollars(run.own.costUsd)}`;
    }
    if (view.kind === 'model') {
      const exchange = /** @type {ViewExchange} */ (data.exchanges[view.ref]);
      return `model call, step ${exchange.step}, attempt ${exchange.attempt}${exchangeSummary(exchange)}`;
    }
    const call = /** @type {ViewCall} */ (data.calls[view.ref]);
    return `call ${call.call} of ${call.tool} · ${callEnding(call)}`;
  };
  const tooltip = byId('tooltip');
  const timeline = byId('timeline');
  timeline.addEventListener('mouseover', (event) => {
    const bar = /** @type {HTMLElement} */ (event.target).closest('.bar');
    if (!bar) return;
    const view = barList[Number(/** @type {HTMLElement} */ (bar).dataset.bar)];
    if (!view) return;
    const end = view.end === null ? 'still running' : `${duration(view.end - view.start)}`;
    tooltip.innerHTML = `<b>${esc(view.label)}</b><br>${esc(barDetail(view))}<br>from ${duration(view.start)} · ${end}${view.critical ? '<br>on the critical path' : ''}`;
    tooltip.hidden = false;
  });
  timeline.addEventListener('mousemove', (event) => {
    tooltip.style.left = `${event.clientX + 14}px`;
    tooltip.style.top = `${event.clientY + 14}px`;
  });
  timeline.addEventListener('mouseout', (event) => {
    if (/** @type {HTMLElement} */ (event.target).closest('.bar')) tooltip.hidden = true;
  });
  timeline.addEventListener('click', (event) => {
    const bar = /** @type {HTMLElement} */ (event.target).closest('.bar');
    const view = bar ? barList[Number(/** @type {HTMLElement} */ (bar).dataset.bar)] : undefined;
    if (view) select(view.run, view.kind === 'run' ? undefined : view.event);
  });

  // The filter: runs whose name, status, call, tools, prompts or answers hold every word typed, with the runs above them (VIEW-12).
  /** @type {Map<string, HTMLElement>} */
  const treeItems = new Map();
  for (const item of byId('tree').querySelectorAll('li.run'))
    treeItems.set(/** @type {HTMLElement} */ (item).dataset.run ?? '', /** @type {HTMLElement} */ (item));
  /** @type {Map<string, HTMLElement>} */
  const laneRows = new Map();
  for (const row of timeline.querySelectorAll('.lane-row')) laneRows.set(/** @type {HTMLElement} */ (row).dataset.run ?? '', /** @type {HTMLElement} */ (row));
  /** @type {Map<string, string> | undefined} the text each run is searched by, built at the first search */
  let searchText;
  const buildSearchText = () => {
    /** @type {Map<string, string[]>} */
    const parts = new Map(data.runs.map((run) => [run.run, [run.name, run.status, run.code ?? '', run.call ?? '', run.modelLabel, run.request ?? '']]));
    for (const event of events) {
      const list = parts.get(String(event.run));
      if (!list) continue;
      if (event.event === 'model.request' && Array.isArray(event.messages)) {
        for (const message of event.messages) list.push(contentText(/** @type {{content: unknown}} */ (message).content));
      } else if (event.event === 'model.response') list.push(event.solution === null ? String(event.text ?? '') : (JSON.stringify(event.solution) ?? ''));
      else if (event.event === 'call.started') list.push(String(event.tool));
      else if (event.event === 'model.retry') list.push(`retry ${String(event.reason)}`);
    }
    return new Map([...parts].map(([id, list]) => [id, list.join('\n').toLowerCase()]));
  };
  /** Shows the runs matching `query`, and the runs above them for context; all of them when it is empty. @param {string} query */
  const applyFilter = (query) => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    /** @type {Set<string>} */
    const matched = new Set();
    /** @type {Set<string>} */
    const shown = new Set();
    if (words.length > 0) {
      searchText ??= buildSearchText();
      for (const run of data.runs) {
        const text = searchText.get(run.run) ?? '';
        if (!words.every((word) => text.includes(word))) continue;
        matched.add(run.run);
        for (let id = /** @type {string | null | undefined} */ (run.run); id && !shown.has(id); id = runsById.get(id)?.parent) shown.add(id);
      }
    }
    const all = words.length === 0;
    for (const [id, element] of [...treeItems, ...laneRows]) {
      element.hidden = !all && !shown.has(id);
      element.classList.toggle('match', !all && matched.has(id));
      element.classList.toggle('context', !all && shown.has(id) && !matched.has(id));
    }
    byId('filter-count').textContent = all ? '' : `${count(matched.size)} of ${count(data.runs.length)} runs`;
  };
  byId('filter').addEventListener('input', (event) => applyFilter(/** @type {HTMLInputElement} */ (event.target).value));

  // Cost per model and per tier; the total is the top run's usageTotal (VIEW-4).
  /** @param {string} heading @param {string} id @param {ViewGroup[]} groups */
  const costTable = (heading, id, groups) =>
    `<table id="${id}"><thead><tr><th>${heading}</th><th>runs</th><th>steps</th><th>input</th><th>output</th><th>cost</th></tr></thead><tbody>${groups
      .map(
        ({ key, label, figures }) =>
          `<tr data-key="${esc(key ?? '')}"><td title="${esc(key ?? '')}">${esc(label)}</td><td>${count(figures.runs)}</td><td>${count(figures.steps)}</td><td>${count(figures.inputTokens)}</td><td>${count(figures.outputTokens)}</td><td class="cost" data-value="${figures.costUsd ?? ''}">${dollars(figures.costUsd)}</td></tr>`,
      )
      .join(
        '',
      )}</tbody><tfoot><tr><th>total</th><td>${count(data.total.runs)}</td><td>${count(data.total.steps)}</td><td>${count(data.total.inputTokens)}</td><td>${count(data.total.outputTokens)}</td><td class="cost">${dollars(data.total.costUsd)}</td></tr></tfoot></table>`;
  const usageTotal = data.usageTotal;
  const agreement = usageTotal
    ? `<p class="meta">The top run's usageTotal: <span id="usage-total" data-value="${usageTotal.costUsd ?? ''}">${dollars(usageTotal.costUsd)}</span>, ${count(usageTotal.inputTokens)} in / ${count(usageTotal.outputTokens)} out.</p>`
    : '<p class="meta">The top run has not completed: the total counts the answers the trace holds so far.</p>';
  byId('cost').innerHTML =
    `<p class="total">Total <b id="cost-total" data-value="${data.total.costUsd ?? ''}">${dollars(data.total.costUsd)}</b> · ${count(data.total.inputTokens)} in / ${count(data.total.outputTokens)} out</p>${agreement}` +
    costTable('model', 'cost-models', data.models) +
    costTable('tier', 'cost-tiers', data.tiers);

  // Approvals asked and decided (VIEW-6).
  /**
   * An approval's parameters (without meta-properties, as the prompt showed them): one line to open for long values.
   * @param {unknown} params
   */
  function approvalParams(params) {
    const text = JSON.stringify(params) ?? '';
    if (text.length <= 80) return `<code>${esc(text)}</code>`;
    return `<details><summary><code>${esc(text.slice(0, 80))}…</code></summary><pre class="params">${esc(JSON.stringify(params, null, 2))}</pre></details>`;
  }

  byId('approvals').innerHTML =
    data.approvals.length === 0
      ? '<p class="hint">No approvals were asked.</p>'
      : `<table id="approvals-table"><thead><tr><th>run</th><th>call</th><th>parameters</th><th>decision</th><th>by</th><th>reason</th></tr></thead><tbody>${data.approvals
          .map(
            (approval) =>
              `<tr data-decision="${esc(approval.decision ?? 'pending')}"><td>${esc(runsById.get(approval.run)?.name ?? approval.run)}</td><td>${esc(approval.call)} <b>${esc(approval.tool)}</b></td><td class="params">${approvalParams(approval.params)}</td><td class="decision">${esc(approval.decision ?? 'pending')}</td><td class="by">${esc(approval.by ?? '—')}</td><td class="reason">${esc(approval.reason ?? '')}</td></tr>`,
          )
          .join('')}</tbody></table>`;

  if (top) select(top.run);
  document.body.dataset.ready = 'true';
})();
