// The page works without this script: forms post, and the server answers
// with the page again. With it, the page follows the thread as its facts
// are appended (an event stream from the server): each fact comes with its
// timeline row and, for a fact of an action, that action's row of the
// actions table, which the page applies; only the panel (the status, what
// waits, the verdict) is asked for again. The forms post in place.
// Everything it inserts was rendered, and escaped, by the server.
"use strict";
(function () {
  const body = document.body;
  const csrf = body.dataset.csrf || "";
  const thread = body.dataset.thread;
  let pending = null;

  function later(fn) {
    clearTimeout(pending);
    pending = setTimeout(fn, 100);
  }

  function fetchInto(url, el) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error("HTTP " + r.status))))
      .then((html) => { el.innerHTML = html; });
  }

  function say(text, cls) {
    const p = document.getElementById("flash");
    if (!p) return;
    p.textContent = text;
    p.className = "flash " + cls;
  }

  function follow(url, onEvent, name) {
    const es = new EventSource(url);
    es.addEventListener("open", () => body.classList.add("live"));
    es.addEventListener("error", () => body.classList.remove("live"));
    es.addEventListener(name, onEvent);
    return es;
  }

  // applyAction puts an action's row, as the server rendered it with a
  // fact of the action, in place of the one the table has, or adds it.
  function applyAction(a) {
    const old = document.getElementById("action-" + a.id);
    if (old) {
      old.outerHTML = a.html;
      return;
    }
    const table = document.getElementById("actions");
    if (!table) return;
    table.insertAdjacentHTML("beforeend", a.html);
    const none = document.getElementById("no-actions");
    if (none) none.remove();
  }

  const panel = document.getElementById("panel");
  if (thread) {
    const timeline = document.getElementById("timeline");
    const base = "t/" + encodeURIComponent(thread);
    let head = Number(body.dataset.head || 0);
    follow(base + "/events?from=" + (head + 1), (ev) => {
      const d = JSON.parse(ev.data);
      if (d.seq <= head) return;
      head = d.seq;
      body.dataset.head = String(head);
      timeline.insertAdjacentHTML("beforeend", d.html);
      const row = document.getElementById("f" + d.seq);
      if (row) row.classList.add("new");
      if (d.action) applyAction(d.action);
      later(() => fetchInto(base + "/panel", panel));
    }, "fact");
  } else if (body.dataset.list !== undefined) {
    const rows = document.getElementById("threads");
    follow("events", () => later(() => fetchInto("list" + location.search, rows)), "threads");
  }

  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    if (!form.matches("form[data-live]")) return;
    ev.preventDefault();
    const data = new URLSearchParams(new FormData(form));
    if (ev.submitter && ev.submitter.name) data.append(ev.submitter.name, ev.submitter.value);
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRF-Token": csrf },
    })
      .then((r) => r.json().then((j) => [r.ok, j]))
      .then(([ok, j]) => {
        if (!ok) {
          say(j.error || "refused", "error");
        } else if (j.seq !== undefined) {
          let text = (j.duplicate ? "already answered (seq " + j.seq + "): nothing appended" : "answered by " + j.by + " (seq " + j.seq + ")");
          if (j.resuming) text += "; the server resumes the thread";
          else if (j.not_resumed) text += "; not resumed: " + j.not_resumed;
          say(text, "ok");
        } else if (j.stopped) {
          say("stopped: " + (j.reason || j.status), "ok");
        } else {
          say("the server resumes the thread", "ok");
        }
        if (panel && thread) return fetchInto("t/" + encodeURIComponent(thread) + "/panel", panel);
      })
      .catch((e) => say(String(e), "error"))
      .finally(() => buttons.forEach((b) => { b.disabled = false; }));
  });
})();
