// The live class page: one SignalR connection, a tile per student, the alert banner. Served from /static/live.js.
"use strict";
(() => {
  const root = document.getElementById("live");
  const classId = Number(root.dataset.classId);
  const tilesEl = document.getElementById("tiles");
  const bannerEl = document.getElementById("banner");
  const statusEl = document.getElementById("status");
  const behindEl = document.getElementById("behind");
  const alerts = new Map();
  let seesBp = false;
  let staleAfterMs = 10000;
  // Publish-to-tile latency, for the benchmark: ms from a reading's timestamp to the moment its tile showed it.
  const latency = (window.saitoTileLatency = []);

  if (typeof signalR === "undefined") {
    statusEl.textContent = "⚠ The live script is missing (Saito was built without npm): no live updates.";
    return;
  }

  const text = (el, cls, value) => {
    const node = document.createElement(el);
    if (cls) node.className = cls;
    if (value !== undefined) node.textContent = value;
    return node;
  };
  const fmt = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));
  // One formatter for the page: building one per call (toLocaleTimeString with options) costs more than the rest of a tile.
  const clock = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const time = (iso) => (iso ? clock.format(new Date(iso)) : "never");
  const ago = (iso) => {
    if (!iso) return "never";
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 60 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
  };

  // Tiles are built once and then only their changed text is set; updates that arrive while the page is busy are
  // coalesced (the latest per student wins) and drawn together, so a page never falls behind a stream of pushes.
  const tiles = new Map();
  const pending = new Map();
  let scheduled = false;

  const heartKinds = new Set(["tachycardia", "heart-rate-high", "bradycardia"]);
  const classIcon = { clinical: "⚠", device: "⚙", attendance: "✖" };
  // What the tile's alert line says after the title: the value that raised it, in its unit.
  const alertValue = (a) => {
    if (a.value === null || a.value === undefined) return "";
    if (heartKinds.has(a.kind)) return `: ${fmt(a.value, 0)} bpm`;
    if (a.kind === "overheating") return `: ${fmt(a.value, 1)} °C`;
    if (a.kind === "silent-sensor") return `: ${fmt(a.value, 0)} s`;
    return "";
  };

  function buildTile(id) {
    const tile = text("article", "tile");
    tile.id = `tile-${id}`;
    tile.dataset.owner = id;
    const head = text("header", "tile-head");
    const name = text("a", "name");
    name.href = `/students/${id}`;
    const checkIn = text("span", "checkin");
    head.append(name, checkIn);
    const alert = text("p", "tile-alert");
    alert.hidden = true;
    // The numbers that matter, large: each with a word for screen readers, as the icon is for the eye.
    const big = text("p", "big");
    const vital = (icon, label, cls) => {
      const wrap = text("span", "vital");
      const mark = text("span", "icon", icon);
      mark.setAttribute("aria-hidden", "true");
      const value = text("span", cls);
      wrap.append(mark, text("span", "sr-only", `${label} `), value);
      big.appendChild(wrap);
      return { wrap, value };
    };
    const hr = vital("♥", "Heart rate", "hr");
    const temp = vital("", "Skin temperature", "temp");
    const bp = text("p", "small bp");
    const motion = text("p", "small motion");
    const sway = text("span", "sway");
    const seat = text("span", "seat");
    motion.append(sway, seat);
    const devices = text("p", "devices");
    const updated = text("p", "updated");
    tile.append(head, alert, big, bp, motion, devices, updated);
    tilesEl.appendChild(tile);
    return { tile, name, checkIn, alert, hr, temp, bp, motion, sway, seat, devices, updated, vitalsAt: null };
  }

  const set = (node, value) => {
    if (node.textContent !== value) node.textContent = value;
  };
  const setClass = (node, value) => {
    if (node.className !== value) node.className = value;
  };
  // Written only when it changes: a page takes a push per tile many times a second.
  const setHidden = (node, value) => {
    if (node.hidden !== value) node.hidden = value;
  };

  function renderTile(t) {
    let view = tiles.get(t.ownerId);
    if (!view) {
      view = buildTile(t.ownerId);
      tiles.set(t.ownerId, view);
    }
    set(view.name, t.name);
    // The state as an icon the eye takes in at once, its words for screen readers and a finger held on it.
    const checkIn = { in: ["✔", "checked in"], out: ["↩", "left"], "not-yet": ["✖", "not checked in"] }[t.checkIn] ?? ["?", t.checkIn];
    if (view.checkIn.dataset.state !== t.checkIn) {
      view.checkIn.dataset.state = t.checkIn;
      view.checkIn.title = checkIn[1];
      view.checkIn.replaceChildren(text("span", null, checkIn[0]), text("span", "sr-only", ` ${checkIn[1]}`));
      view.checkIn.firstChild.setAttribute("aria-hidden", "true");
    }
    setClass(view.checkIn, `checkin checkin-${t.checkIn}`);
    const a = t.alert;
    // Not checked in is what the tile's check-in mark already says; every other alert is named in words.
    setHidden(view.alert, !a || a.kind === "not-checked-in");
    if (a) {
      const more = t.openAlerts > 1 ? ` (+${t.openAlerts - 1} more)` : "";
      set(view.alert, `${a.acknowledged ? "◐" : classIcon[a.class] ?? "⚠"} ${a.title}${alertValue(a)}${more}`);
      setClass(view.alert, `tile-alert class-${a.class}${a.acknowledged ? " acked" : ""}`);
      view.alert.dataset.kind = a.kind;
    }
    setClass(view.tile, `tile${a ? ` alerting class-${a.class}${a.acknowledged ? " acked" : ""}` : ""}${view.tile.classList.contains("stale") ? " stale" : ""}`);
    set(view.hr.value, `${fmt(t.heartRate, 0)} bpm`);
    view.hr.wrap.classList.toggle("alarm", !!a && heartKinds.has(a.kind));
    set(view.temp.value, `${fmt(t.skinTemperature, 1)} °C`);
    view.temp.wrap.classList.toggle("alarm", !!a && a.kind === "overheating");
    const noVitals = t.heartRate == null && t.skinTemperature == null;
    setHidden(view.hr.wrap.parentNode, noVitals);
    if (seesBp) {
      setHidden(view.bp, t.systolic == null);
      set(view.bp, `${fmt(t.systolic, 0)}/${fmt(t.diastolic, 0)} mmHg`);
    } else if (view.bp.isConnected) {
      // Not merely hidden: an aide's page has no blood pressure element at all (the server sends none either).
      view.bp.remove();
    }
    setHidden(view.sway, !t.sway);
    if (t.sway) {
      const s = t.sway;
      set(view.sway, s.settling ? `settling (${s.posture})` : `${fmt(s.meanDistance * 100, 1)} cm · ${fmt(s.meanSpeed * 100, 1)} cm/s (${s.posture})`);
    }
    setHidden(view.seat, !t.seat);
    if (t.seat) {
      set(view.seat, t.seat.occupied
        ? `occupied since ${time(t.seat.since)} · restless ${fmt(t.seat.restlessness * 100, 1)} cm/s`
        : `⚠ empty since ${time(t.seat.since)}`);
      setClass(view.seat, t.seat.occupied ? "seat" : "seat empty");
    }
    setHidden(view.motion, !t.sway && !t.seat);
    const silent = t.devices.filter((d) => d.silent);
    set(view.devices, t.devices.length === 0 ? "⚙ no device assigned"
      : silent.length ? `⚠ silent: ${silent.map((d) => `${d.serial} (${ago(d.lastReading)})`).join(", ")}`
      : `${t.devices.length} device${t.devices.length > 1 ? "s" : ""} sending`);
    setClass(view.devices, t.devices.length === 0 ? "devices none" : silent.length ? "devices silent" : "devices");
    setHidden(view.devices, t.devices.length > 0 && silent.length === 0);
    view.vitalsAt = t.vitalsAt;
    if (t.vitalsAt && t.vitalsAt !== view.tile.dataset.vitalsAt) {
      view.tile.dataset.vitalsAt = t.vitalsAt;
      if (latency.length < 100000) latency.push(Date.now() - Date.parse(t.vitalsAt));
    }
    age(view);
  }

  // Stale never looks live: values older than Dashboard:StaleAfterSeconds grey out and say how old they are.
  function age(view) {
    const at = view.vitalsAt;
    const old = !!at && Date.now() - Date.parse(at) > staleAfterMs;
    if (view.tile.classList.contains("stale") !== old) view.tile.classList.toggle("stale", old);
    set(view.updated, !at ? "no vitals yet" : old ? `◌ ${ago(at)}` : `vitals ${time(at)}`);
  }
  setInterval(() => tiles.forEach(age), 1000);

  function drawPending() {
    scheduled = false;
    const batch = [...pending.values()];
    pending.clear();
    batch.forEach(renderTile);
  }

  function queueTiles(list) {
    for (const t of list) pending.set(t.ownerId, t);
    if (!scheduled) {
      scheduled = true;
      setTimeout(drawPending, 0);
    }
  }

  // The one order of alerts (AlertClasses.Compare on the server): class, then not yet acknowledged, then escalation
  // level, then age. A racing heart is never below an attendance line.
  const classRank = { clinical: 0, device: 1, attendance: 2 };
  const byUrgency = (a, b) => (classRank[a.class] ?? 3) - (classRank[b.class] ?? 3)
    || Number(!!a.acknowledgedBy) - Number(!!b.acknowledgedBy)
    || b.level - a.level
    || Date.parse(a.raisedAt) - Date.parse(b.raisedAt);

  async function acknowledge(ids, button) {
    button.disabled = true;
    try {
      for (const id of ids) await connection.invoke("Acknowledge", id);
    } catch (e) {
      button.disabled = false;
      statusEl.textContent = `⚠ ${e.message}`;
    }
  }

  function ackButton(ids, label) {
    const button = text("button", "ack", label);
    button.type = "button";
    button.addEventListener("click", () => acknowledge(ids, button));
    return button;
  }

  // Raised, acknowledged but still active: two looks that differ by shape, icon and words, not colour alone.
  function alertItem(a) {
    const acked = !!a.acknowledgedBy;
    const item = text("div", `alert class-${a.class} level-${a.level}${acked ? " acked" : ""}`);
    item.dataset.alertId = a.id;
    item.dataset.kind = a.kind;
    item.appendChild(text("strong", null, `${acked ? "◐" : classIcon[a.class] ?? "⚠"} ${a.studentName}: ${a.title}`));
    item.appendChild(text("span", "detail", ` ${a.detail} · since ${time(a.raisedAt)}${a.level > 0 ? ` · ${a.levelName}` : ""}`));
    if (acked) {
      item.appendChild(text("span", "by", ` · acknowledged by ${a.acknowledgedBy}${a.acknowledgedAt ? ` at ${time(a.acknowledgedAt)}` : ""}, still active`));
    } else {
      item.appendChild(ackButton([a.id], "Acknowledge"));
    }
    return item;
  }

  // Attendance alerts of one kind collapse into one line: "10 not checked in: Greta, Hugo, …  [Acknowledge all]".
  function attendanceLine(kind, group) {
    const waiting = group.filter((a) => !a.acknowledgedBy);
    const seen = group.length - waiting.length;
    const item = text("div", `alert class-attendance group${waiting.length === 0 ? " acked" : ""}`);
    item.dataset.kind = kind;
    item.dataset.count = group.length;
    const names = group.map((a) => a.studentName);
    const shown = names.slice(0, 6).join(", ") + (names.length > 6 ? `, … ${names.length - 6} more` : "");
    item.appendChild(text("strong", null, `${waiting.length ? "✖" : "◐"} ${group.length} ${group[0].title.toLowerCase()}:`));
    item.appendChild(text("span", "detail", ` ${shown}${seen ? ` · ${seen} acknowledged` : ""}`));
    if (waiting.length) item.appendChild(ackButton(waiting.map((a) => a.id), waiting.length > 1 ? `Acknowledge all ${waiting.length}` : "Acknowledge"));
    return item;
  }

  function renderAlerts() {
    const open = [...alerts.values()].sort(byUrgency);
    const items = [];
    const attendance = new Map();
    for (const a of open) {
      if (a.class !== "attendance") {
        items.push(alertItem(a));
      } else if (!attendance.has(a.kind)) {
        attendance.set(a.kind, [a]);
      } else {
        attendance.get(a.kind).push(a);
      }
    }
    for (const [kind, group] of attendance) items.push(group.length === 1 ? alertItem(group[0]) : attendanceLine(kind, group));
    bannerEl.replaceChildren(...items);
    bannerEl.hidden = items.length === 0;
  }

  const connection = new signalR.HubConnectionBuilder()
    .withUrl("/live/hub")
    .withAutomaticReconnect([0, 1000, 2000, 5000, 10000, 10000, 30000])
    .build();
  connection.on("tiles", queueTiles);
  connection.on("alert", (message) => {
    if (message.event === "cleared") alerts.delete(message.alert.id);
    else alerts.set(message.alert.id, message.alert);
    renderAlerts();
  });
  connection.onreconnecting(() => (statusEl.textContent = "◌ Reconnecting… (values may be out of date)"));
  connection.onreconnected(() => watch());
  connection.onclose(() => (statusEl.textContent = "✖ Disconnected: reload the page"));

  async function watch() {
    try {
      const live = await connection.invoke("Watch", classId);
      seesBp = live.seesBloodPressure;
      staleAfterMs = live.staleAfterSeconds * 1000;
      alerts.clear();
      live.alerts.forEach((a) => alerts.set(a.id, a));
      live.tiles.forEach(renderTile);
      renderAlerts();
      behindEl.hidden = live.health.skippedReadings === 0;
      statusEl.textContent = live.session ? `● Live · in session until ${time(live.session.endsAt)}` : "● Live · no session now";
      root.dataset.ready = "true";
    } catch (e) {
      statusEl.textContent = `⚠ ${e.message}`;
    }
  }

  connection.start().then(watch).catch((e) => (statusEl.textContent = `✖ Could not connect: ${e.message}`));
})();
