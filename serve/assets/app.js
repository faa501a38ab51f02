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

  // Live progress: while the server drives the thread, the model's text
  // as it streams and a running command's output, each in a box of its
  // own until the fact that records it arrives (model.turn; the action's
  // completion or interruption). The server escaped the text as a
  // terminal shows it; it is set as text, never as markup.
  const live = document.getElementById("live");
  const items = document.getElementById("live-items");
  const boxes = new Map(); // key: "turn-N" or "action-ID"
  const actionsDone = new Set();
  // Actions recorded before the page was made: a stream opened in the
  // middle of a drive starts with what is not recorded yet, and nothing
  // of theirs is shown live.
  document.querySelectorAll("tbody[id^='action-'] tr.action td:nth-child(3)").forEach((td) => {
    if (!/^(requested|started)/.test(td.textContent.trim())) {
      actionsDone.add(td.closest("tbody").id.slice("action-".length));
    }
  });
  let turnsDone = 0; // turns up to this one are recorded
  const maxChars = 64 * 1024;

  function box(key, title) {
    let b = boxes.get(key);
    if (!b) {
      const div = document.createElement("div");
      div.className = "live-item";
      div.id = "live-" + key;
      const p = document.createElement("p");
      p.className = "meta";
      p.textContent = title;
      const pre = document.createElement("pre");
      pre.className = "live-text";
      div.append(p, pre);
      items.append(div);
      live.hidden = false;
      b = { div, pre };
      boxes.set(key, b);
    }
    return b.pre;
  }

  function show(pre, text) {
    pre.append(text);
    if (pre.textContent.length > maxChars) {
      pre.textContent = "…" + pre.textContent.slice(-maxChars / 2);
    }
    pre.scrollTop = pre.scrollHeight;
  }

  function clear(key) {
    const b = boxes.get(key);
    if (b) {
      b.div.remove();
      boxes.delete(key);
    }
    if (boxes.size === 0 && items.querySelector(".live-item") === null) live.hidden = true;
  }

  function progress(ev) {
    const line = JSON.parse(ev.data);
    const e = line.progress;
    if (!e) return;
    if (e.event === "text" && e.turn > turnsDone) {
      show(box("turn-" + e.turn, "turn " + e.turn + ": the model's text"), e.text || "");
    } else if (e.event === "turn_ended" && e.error) {
      clear("turn-" + e.turn); // tried again from its start, or failed
    } else if (e.event === "output" && !actionsDone.has(e.action_id)) {
      show(box("action-" + e.action_id, e.action_id + ": " + (e.stream || "output")), e.text || "");
    }
  }

  function recorded(d) {
    if (d.kind === "model.turn") {
      for (const key of Array.from(boxes.keys())) {
        if (key.startsWith("turn-")) {
          turnsDone = Math.max(turnsDone, Number(key.slice(5)));
          clear(key);
        }
      }
    } else if (d.action && (d.kind === "action.completed" || d.kind === "action.interrupted")) {
      actionsDone.add(d.action.id);
      clear("action-" + d.action.id);
    }
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
      if (live) recorded(d);
      later(() => fetchInto(base + "/panel", panel));
    }, "fact");
    if (live) {
      const ps = new EventSource(base + "/progress");
      ps.addEventListener("open", () => body.classList.add("following"));
      ps.addEventListener("progress", progress);
      ps.addEventListener("dropped", (ev) => {
        const n = JSON.parse(ev.data).dropped;
        const p = document.createElement("p");
        p.className = "dropped";
        p.textContent = "… " + n + " live events dropped (the page did not keep up); the facts keep everything";
        items.append(p);
        live.hidden = false;
      });
    }
  } else if (body.dataset.list !== undefined) {
    const rows = document.getElementById("threads");
    let parked = parkedIn(rows);
    follow("events", () => later(() => fetchInto("list" + location.search, rows).then(() => {
      const now = parkedIn(rows);
      now.forEach((waits, id) => { if (!parked.has(id)) notify(id, waits); });
      parked = now;
    })), "threads");
  }

  // Notifications, opt-in: with the person's leave (the button, and the
  // browser's permission), a thread that comes to wait for a person while
  // the list is open says so, even from another tab.
  function parkedIn(rows) {
    const out = new Map();
    if (!rows) return out;
    rows.querySelectorAll("tr.row-parked").forEach((tr) => {
      const a = tr.querySelector("td a");
      const w = tr.querySelector("td.waits");
      if (a) out.set(a.textContent, w ? w.textContent : "");
    });
    return out;
  }

  function notifying() {
    return "Notification" in window && Notification.permission === "granted" && localStorage.getItem("harness-notify") === "1";
  }

  function notify(id, waits) {
    if (!notifying()) return;
    new Notification("harness: thread " + id + " waits for you", { body: waits, tag: "harness-" + id });
  }

  const optIn = document.getElementById("notify");
  if (optIn && "Notification" in window) {
    const show = () => {
      optIn.textContent = notifying() ? "Notifications on (turn off)" : "Notify me when a thread waits";
    };
    optIn.hidden = false;
    show();
    optIn.addEventListener("click", () => {
      if (notifying()) {
        localStorage.removeItem("harness-notify");
        show();
        return;
      }
      Notification.requestPermission().then((p) => {
        if (p === "granted") localStorage.setItem("harness-notify", "1");
        show();
      });
    });
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
