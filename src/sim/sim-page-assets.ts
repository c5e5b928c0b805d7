// The simulator page's own style and script, inlined into the page (no library, nothing fetched from elsewhere).
// The script builds every element with DOM calls and sets Dida text only as text (never as HTML).

export const PAGE_STYLE = String.raw`
:root { color-scheme: light; --line: #e4e4e7; --muted: #71717a; --accent: #2563eb; --high: #dc2626; --medium: #d97706; --low: #2563eb; --none: #a1a1aa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif; background: #f4f4f5; color: #18181b; }
main { max-width: 680px; margin: 0 auto; padding: 12px; }
header h1 { font-size: 20px; margin: 4px 0 0; }
header p { margin: 0 0 8px; color: var(--muted); }
.bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
.status { color: var(--muted); font-size: 13px; }
.status.bad { color: var(--high); }
.banner { background: #fef2f2; color: #991b1b; border: 1px solid #fecaca; border-radius: 8px; padding: 6px 10px; margin: 8px 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 10px 12px; margin: 10px 0; }
.card h2 { font-size: 16px; margin: 0 0 8px; }
form.add { display: grid; gap: 6px; }
input[type=text], textarea, select { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 8px; background: #fff; width: 100%; }
textarea { min-height: 56px; resize: vertical; }
.row { display: flex; gap: 8px; align-items: center; }
.row > input[type=text], .row > select { flex: 1; width: auto; }
.row > label, button { white-space: nowrap; }
button { font: inherit; padding: 5px 12px; border-radius: 8px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.round { width: 26px; height: 26px; padding: 0; border-radius: 50%; flex: none; }
.hint { color: var(--muted); font-size: 13px; }
.task-head { display: flex; gap: 10px; align-items: flex-start; }
.task-title { font-weight: 600; flex: 1; overflow-wrap: anywhere; }
.badge { font-size: 12px; border-radius: 6px; padding: 1px 7px; color: #fff; flex: none; }
.p5 { background: var(--high); } .p3 { background: var(--medium); } .p1 { background: var(--low); } .p0 { background: var(--none); }
.round.p5 { border: 2px solid var(--high); background: #fff; } .round.p3 { border: 2px solid var(--medium); background: #fff; }
.round.p1 { border: 2px solid var(--low); background: #fff; } .round.p0 { border: 2px solid var(--none); background: #fff; }
.meta { color: var(--muted); font-size: 13px; display: flex; gap: 10px; flex-wrap: wrap; margin: 2px 0 0 36px; }
.desc { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0 0 36px; }
ul.items { list-style: none; padding: 0; margin: 6px 0 0 36px; }
ul.items li label { display: flex; gap: 8px; align-items: baseline; overflow-wrap: anywhere; }
ul.items li.done span { color: var(--muted); text-decoration: line-through; }
.controls { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 0 36px; align-items: center; }
.controls select { width: auto; }
.sub { margin: 8px 0 0 36px; }
.comments { margin: 8px 0 0 36px; border-top: 1px dashed var(--line); padding-top: 6px; }
.comment { margin: 4px 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.comment b { font-weight: 600; margin-right: 6px; }
.comment time { color: var(--muted); font-size: 12px; margin-left: 6px; }
details.done-list summary { cursor: pointer; color: var(--muted); margin: 12px 0 4px; }
.task.done .task-title { color: var(--muted); text-decoration: line-through; }
`;

export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var boot = JSON.parse(document.getElementById('boot').textContent);
  var T = boot.strings;
  var LANG = boot.locale === 'zh' ? 'zh-CN' : 'en';
  var PRIORITIES = [5, 3, 1, 0];
  var app = document.getElementById('app');
  var state = { data: null, raw: '', list: null, editing: {}, error: '', status: '', statusBad: false };

  function t(key, vars) {
    var text = Object.prototype.hasOwnProperty.call(T, key) ? T[key] : key;
    if (!vars) return text;
    return text.replace(/\{(\w+)\}/g, function (whole, name) { return Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name]) : whole; });
  }

  // Builds an element; every text goes in as text (textContent), never as HTML.
  function el(tag, props, children) {
    var node = document.createElement(tag);
    props = props || {};
    Object.keys(props).forEach(function (key) {
      var value = props[key];
      if (value === undefined || value === null || value === false) return;
      if (key === 'text') node.textContent = String(value);
      else if (key === 'className') node.className = value;
      else if (key.slice(0, 2) === 'on') node.addEventListener(key.slice(2), value);
      else if (key === 'value') node.value = value;
      else if (key === 'checked') node.checked = !!value;
      else node.setAttribute(key, value === true ? '' : String(value));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function formatDate(isoText, allDay, zone) {
    if (!isoText) return '';
    var options = allDay ? { dateStyle: 'medium' } : { dateStyle: 'medium', timeStyle: 'short' };
    try { options.timeZone = zone || state.data.timeZone; return new Intl.DateTimeFormat(LANG, options).format(new Date(isoText)); }
    catch (e) { delete options.timeZone; return new Intl.DateTimeFormat(LANG, options).format(new Date(isoText)); }
  }

  function setStatus(text, bad) { state.status = text; state.statusBad = !!bad; var node = document.getElementById('sync'); if (node) { node.textContent = text; node.className = bad ? 'status bad' : 'status'; } }

  function load() {
    return fetch('/page/data', { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      if (res.status === 403) { setStatus(t('page.status.denied'), true); return; }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.text().then(function (text) {
        setStatus(t('page.status.live', { time: new Intl.DateTimeFormat(LANG, { timeStyle: 'medium' }).format(new Date()) }), false);
        if (text === state.raw) return;
        state.raw = text;
        state.data = JSON.parse(text);
        render();
      });
    }).catch(function () { setStatus(t('page.status.offline'), true); });
  }

  function send(edit) {
    state.error = '';
    return fetch('/page/edit', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(edit) })
      .then(function (res) { return res.json().catch(function () { return {}; }).then(function (body) { if (!res.ok) throw new Error(body.error || ('HTTP ' + res.status)); return body; }); })
      .catch(function (error) { state.error = t('page.error', { error: error.message }); render(); throw error; })
      .then(function (body) { return load().then(function () { return body; }); });
  }

  // What the person is typing survives a refresh: inputs carry data-draft keys, their values and the focus are kept.
  function keepDrafts() {
    var drafts = {};
    app.querySelectorAll('[data-draft]').forEach(function (input) { if (input.value) drafts[input.getAttribute('data-draft')] = input.value; });
    var active = document.activeElement;
    var focus = active && active.getAttribute && active.getAttribute('data-draft');
    var selection = focus && typeof active.selectionStart === 'number' ? [active.selectionStart, active.selectionEnd] : null;
    return function restore() {
      app.querySelectorAll('[data-draft]').forEach(function (input) {
        var key = input.getAttribute('data-draft');
        // A task's own priority select shows Dida's value; only the new-task form keeps its choice.
        if (Object.prototype.hasOwnProperty.call(drafts, key) && (input.tagName !== 'SELECT' || key.indexOf('add:') === 0)) input.value = drafts[key];
        if (key === focus) { input.focus(); if (selection && input.setSelectionRange) input.setSelectionRange(selection[0], selection[1]); }
      });
    };
  }

  // Empties the inputs with these draft keys (as they are now on the page: a refresh may have rebuilt them).
  function clearDrafts(keys) {
    app.querySelectorAll('[data-draft]').forEach(function (input) { if (keys.indexOf(input.getAttribute('data-draft')) >= 0) input.value = ''; });
  }

  function currentList() {
    var lists = state.data.lists;
    if (!lists.length) return null;
    var wanted = state.list || (location.hash.indexOf('#list=') === 0 ? decodeURIComponent(location.hash.slice(6)) : '');
    var found = lists.filter(function (l) { return l.id === wanted; })[0];
    return found || lists.filter(function (l) { return !l.closed; })[0] || lists[0];
  }

  function priorityOptions(selected, draftKey, label, onchange) {
    return el('select', { 'aria-label': label, 'data-draft': draftKey, onchange: onchange, 'data-testid': draftKey.split(':')[0] === 'add' ? 'add-priority' : 'task-priority' },
      PRIORITIES.map(function (p) { return el('option', { value: String(p), selected: p === selected ? 'selected' : false, text: t('page.priority.' + p) }); }));
  }

  function addForm(list) {
    var title = el('input', { type: 'text', 'data-draft': 'add:title', 'aria-label': t('page.add.title'), placeholder: t('page.add.title'), 'data-testid': 'add-title', maxlength: '2000' });
    var desc = el('textarea', { 'data-draft': 'add:desc', 'aria-label': t('page.add.description'), placeholder: t('page.add.description'), 'data-testid': 'add-description' });
    var items = el('textarea', { 'data-draft': 'add:items', 'aria-label': t('page.add.items'), placeholder: t('page.add.items'), 'data-testid': 'add-items' });
    var tags = el('input', { type: 'text', 'data-draft': 'add:tags', 'aria-label': t('page.add.tags'), placeholder: t('page.add.tags'), 'data-testid': 'add-tags' });
    var priority = priorityOptions(3, 'add:priority', t('page.add.priority'));
    var form = el('form', { className: 'add', onsubmit: function (event) {
      event.preventDefault();
      if (!title.value.trim()) { state.error = t('page.add.needTitle'); render(); return; }
      send({ op: 'addTask', projectId: list.id, title: title.value, description: desc.value, priority: Number(priority.value),
        items: items.value.split('\n').map(function (s) { return s.trim(); }).filter(Boolean),
        tags: tags.value.split(/[\s,，]+/).map(function (s) { return s.trim(); }).filter(Boolean) })
        .then(function () { clearDrafts(['add:title', 'add:desc', 'add:items', 'add:tags']); }, function () {});
    } }, [title, desc, items, tags,
      el('div', { className: 'row' }, [el('label', { text: t('page.add.priority') }), priority, el('button', { type: 'submit', className: 'primary', 'data-testid': 'add-submit', text: t('page.add.submit') })]),
      el('div', { className: 'hint', text: t('page.draftHint') })]);
    return el('section', { className: 'card' }, [el('h2', { text: t('page.add.heading') }), form]);
  }

  function comments(task) {
    var input = el('input', { type: 'text', 'data-draft': task.id + ':comment', placeholder: t('page.comment.new'), 'aria-label': t('page.comment.new'), 'data-testid': 'comment-input' });
    var list = task.comments.map(function (c) {
      return el('div', { className: 'comment', 'data-testid': 'comment' }, [el('b', { text: c.mine ? t('page.comment.you') : t('page.comment.other', { id: c.userId }) }), c.text, c.time ? el('time', { text: formatDate(c.time, false) }) : null]);
    });
    var form = el('form', { className: 'row', onsubmit: function (event) {
      event.preventDefault();
      if (!input.value.trim()) return;
      var text = input.value;
      send({ op: 'comment', taskId: task.id, text: text }).then(function () { clearDrafts([task.id + ':comment']); }, function () {});
    } }, [input, el('button', { type: 'submit', text: t('page.comment.send'), 'data-testid': 'comment-send' })]);
    return el('div', { className: 'comments' }, [el('div', { className: 'hint', text: t('page.comments', { count: task.commentCount }) })].concat(list, [form]));
  }

  function editor(task) {
    var title = el('input', { type: 'text', 'data-draft': task.id + ':edit-title', value: task.title, 'aria-label': t('page.add.title'), 'data-testid': 'edit-title' });
    var desc = el('textarea', { 'data-draft': task.id + ':edit-desc', 'aria-label': t('page.add.description'), 'data-testid': 'edit-description' });
    desc.value = task.description;
    return el('form', { className: 'add sub', onsubmit: function (event) {
      event.preventDefault();
      send({ op: 'editTask', taskId: task.id, title: title.value, description: desc.value }).then(function () { delete state.editing[task.id]; render(); }, function () {});
    } }, [title, desc, el('div', { className: 'row' }, [
      el('button', { type: 'submit', className: 'primary', text: t('page.task.save'), 'data-testid': 'edit-save' }),
      el('button', { type: 'button', text: t('page.task.cancel'), onclick: function () { delete state.editing[task.id]; render(); } })])]);
  }

  function openTask(task) {
    var meta = [];
    if (task.start) meta.push(el('span', { text: t('page.task.start', { date: formatDate(task.start, task.allDay, task.timeZone) }) }));
    if (task.due && task.due !== task.start) meta.push(el('span', { text: t('page.task.due', { date: formatDate(task.due, task.allDay, task.timeZone) }) }));
    if (task.repeat) meta.push(el('span', { text: t('page.task.repeat') }));
    task.tags.forEach(function (tag) { meta.push(el('span', { text: '#' + tag, 'data-testid': 'tag' })); });
    var items = task.items.map(function (item) {
      return el('li', { className: item.done ? 'done' : '', 'data-testid': 'item', 'data-done': item.done ? 'true' : 'false' }, [el('label', {}, [
        el('input', { type: 'checkbox', checked: item.done, onchange: function (event) { send({ op: 'setItem', taskId: task.id, itemId: item.id, done: event.target.checked }).catch(function () {}); } }),
        el('span', { text: item.title })])]);
    });
    var newItem = el('input', { type: 'text', 'data-draft': task.id + ':item', placeholder: t('page.item.new'), 'aria-label': t('page.item.new'), 'data-testid': 'item-input' });
    var addItem = el('form', { className: 'row sub', onsubmit: function (event) {
      event.preventDefault();
      if (!newItem.value.trim()) return;
      send({ op: 'addItem', taskId: task.id, title: newItem.value }).then(function () { clearDrafts([task.id + ':item']); }, function () {});
    } }, [newItem, el('button', { type: 'submit', text: t('page.item.add') })]);
    var controls = el('div', { className: 'controls' }, [
      priorityOptions(task.priority, task.id + ':priority', t('page.add.priority'), function (event) { send({ op: 'setPriority', taskId: task.id, priority: Number(event.target.value) }).catch(function () {}); }),
      el('button', { type: 'button', text: t('page.task.edit'), 'data-testid': 'edit', onclick: function () { state.editing[task.id] = true; render(); } })]);
    return el('article', { className: 'card task', 'data-testid': 'task', 'data-task-id': task.id }, [
      el('div', { className: 'task-head' }, [
        el('button', { type: 'button', className: 'round p' + task.priority, 'aria-label': t('page.task.complete', { title: task.title }), 'data-testid': 'complete', onclick: function () { send({ op: 'complete', taskId: task.id }).catch(function () {}); } }),
        el('div', { className: 'task-title', 'data-testid': 'task-title', text: task.title }),
        el('span', { className: 'badge p' + task.priority, 'data-testid': 'priority', text: t('page.priority.' + task.priority) })]),
      meta.length ? el('div', { className: 'meta' }, meta) : null,
      state.editing[task.id] ? editor(task) : (task.description ? el('div', { className: 'desc', 'data-testid': 'task-description', text: task.description }) : null),
      items.length ? el('ul', { className: 'items' }, items) : null,
      addItem, controls, comments(task)]);
  }

  function doneTask(task) {
    return el('article', { className: 'card task done', 'data-testid': 'done-task', 'data-task-id': task.id }, [
      el('div', { className: 'task-head' }, [
        el('div', { className: 'task-title', 'data-testid': 'task-title', text: task.title }),
        el('button', { type: 'button', 'data-testid': 'reopen', text: t('page.task.reopen'), onclick: function () { send({ op: 'reopen', taskId: task.id }).catch(function () {}); } })]),
      task.completedTime ? el('div', { className: 'meta', text: t('page.task.completedAt', { date: formatDate(task.completedTime, false) }) }) : null,
      comments(task)]);
  }

  function render() {
    var restore = keepDrafts();
    var openDone = !!app.querySelector('details.done-list[open]');
    app.textContent = '';
    app.appendChild(el('header', {}, [el('h1', { text: t('page.title') }), el('p', { text: t('page.subtitle') })]));
    if (!state.data) { app.appendChild(el('div', { id: 'sync', className: state.statusBad ? 'status bad' : 'status', text: state.status })); return; }
    var list = currentList();
    var picker = el('select', { 'aria-label': t('page.list'), 'data-testid': 'list', onchange: function (event) { state.list = event.target.value; location.hash = 'list=' + encodeURIComponent(state.list); render(); } },
      state.data.lists.map(function (l) { return el('option', { value: l.id, selected: list && l.id === list.id ? 'selected' : false, text: l.name }); }));
    app.appendChild(el('div', { className: 'bar' }, [el('label', { text: t('page.list') }), picker, el('span', { id: 'sync', className: state.statusBad ? 'status bad' : 'status', text: state.status })]));
    if (state.error) app.appendChild(el('div', { className: 'banner', role: 'alert', 'data-testid': 'error', text: state.error }));
    if (!list) { app.appendChild(el('p', { className: 'hint', text: t('page.noLists') })); restore(); return; }
    app.appendChild(addForm(list));
    var tasks = state.data.tasks.filter(function (task) { return task.projectId === list.id; });
    var open = tasks.filter(function (task) { return !task.done; });
    var done = tasks.filter(function (task) { return task.done; });
    if (!open.length) app.appendChild(el('p', { className: 'hint', text: t('page.open.empty') }));
    open.forEach(function (task) { app.appendChild(openTask(task)); });
    if (done.length) {
      var details = el('details', { className: 'done-list', open: openDone ? 'open' : false }, [el('summary', { text: t('page.done.heading', { count: done.length }) })].concat(done.map(doneTask)));
      app.appendChild(details);
    }
    restore();
  }

  render();
  load();
  setInterval(load, boot.refreshMs || 1500);
})();
`;
