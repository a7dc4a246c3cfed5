// The live class page: one SignalR connection, a tile per student, the alert banner. Served from /static/live.js.
"use strict";
(() => {
  const root = document.getElementById("live");
  const classId = Number(root.dataset.classId);
  const tilesEl = document.getElementById("tiles");
  const bannerEl = document.getElementById("banner");
  const ackedEl = document.getElementById("acknowledged");
  const statusEl = document.getElementById("status");
  const behindEl = document.getElementById("behind");
  const alerts = new Map();
  let seesBp = false;
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
  const time = (iso) => (iso ? new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }) : "never");
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
    const vitals = text("dl", "vitals");
    const fields = {};
    const add = (key, label, cls) => {
      const dt = text("dt", null, label);
      const dd = text("dd", cls);
      vitals.append(dt, dd);
      fields[key] = { dt, dd };
    };
    add("hr", "♥ Heart", "hr");
    add("bp", "BP", "bp");
    add("temp", "Skin temp", "temp");
    add("sway", "Sway", "sway");
    add("seat", "Seat", "seat");
    const devices = text("p", "devices");
    const updated = text("p", "updated");
    tile.append(head, alert, vitals, devices, updated);
    tilesEl.appendChild(tile);
    return { tile, name, checkIn, alert, fields, devices, updated, vitalsAt: null };
  }

  const set = (node, value) => {
    if (node.textContent !== value) node.textContent = value;
  };
  const setClass = (node, value) => {
    if (node.className !== value) node.className = value;
  };
  const show = (field, visible) => {
    field.dt.hidden = !visible;
    field.dd.hidden = !visible;
  };

  function renderTile(t) {
    let view = tiles.get(t.ownerId);
    if (!view) {
      view = buildTile(t.ownerId);
      tiles.set(t.ownerId, view);
    }
    set(view.name, t.name);
    const checkIn = { in: ["✔", "checked in"], out: ["↩", "left"], "not-yet": ["✖", "not checked in"] }[t.checkIn] ?? ["?", t.checkIn];
    set(view.checkIn, `${checkIn[0]} ${checkIn[1]}`);
    setClass(view.checkIn, `checkin checkin-${t.checkIn}`);
    view.alert.hidden = t.openAlerts === 0;
    set(view.alert, t.openAlerts > 0 ? `⚠ ${t.openAlerts} open alert${t.openAlerts > 1 ? "s" : ""}` : "");
    view.tile.classList.toggle("alerting", t.openAlerts > 0);
    const f = view.fields;
    set(f.hr.dd, `${fmt(t.heartRate, 0)} bpm`);
    if (seesBp) {
      set(f.bp.dd, `${fmt(t.systolic, 0)}/${fmt(t.diastolic, 0)} mmHg`);
    } else if (f.bp.dd.isConnected) {
      // Not merely hidden: an aide's page has no blood pressure element at all (the server sends none either).
      f.bp.dt.remove();
      f.bp.dd.remove();
    }
    set(f.temp.dd, `${fmt(t.skinTemperature, 1)} °C`);
    show(f.sway, !!t.sway);
    if (t.sway) {
      const s = t.sway;
      set(f.sway.dd, s.settling ? `settling (${s.posture})` : `${fmt(s.meanDistance * 100, 1)} cm · ${fmt(s.meanSpeed * 100, 1)} cm/s (${s.posture})`);
    }
    show(f.seat, !!t.seat);
    if (t.seat) {
      set(f.seat.dd, t.seat.occupied
        ? `occupied since ${time(t.seat.since)} · restless ${fmt(t.seat.restlessness * 100, 1)} cm/s`
        : `⚠ empty since ${time(t.seat.since)}`);
      setClass(f.seat.dd, t.seat.occupied ? "seat" : "seat empty");
    }
    const silent = t.devices.filter((d) => d.silent);
    set(view.devices, t.devices.length === 0 ? "no devices assigned"
      : silent.length ? `⚠ silent: ${silent.map((d) => `${d.serial} (${ago(d.lastReading)})`).join(", ")}`
      : `${t.devices.length} device${t.devices.length > 1 ? "s" : ""} sending`);
    setClass(view.devices, silent.length ? "devices silent" : "devices");
    set(view.updated, `vitals ${time(t.vitalsAt)}`);
    if (t.vitalsAt && t.vitalsAt !== view.vitalsAt) {
      view.vitalsAt = t.vitalsAt;
      view.tile.dataset.vitalsAt = t.vitalsAt;
      if (latency.length < 100000) latency.push(Date.now() - Date.parse(t.vitalsAt));
    }
  }

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

  function renderAlerts() {
    bannerEl.replaceChildren();
    ackedEl.replaceChildren();
    const open = [...alerts.values()].sort((a, b) => Date.parse(a.raisedAt) - Date.parse(b.raisedAt));
    for (const a of open) {
      const acked = !!a.acknowledgedBy;
      const item = text("div", acked ? "alert acked" : `alert level-${a.level}`);
      item.dataset.alertId = a.id;
      item.dataset.kind = a.kind;
      item.appendChild(text("strong", null, `⚠ ${a.studentName}: ${a.title}`));
      item.appendChild(text("span", "detail", ` ${a.detail} · since ${time(a.raisedAt)}${a.level > 0 ? ` · ${a.levelName}` : ""}`));
      if (acked) {
        item.appendChild(text("span", "by", ` · acknowledged by ${a.acknowledgedBy}`));
        ackedEl.appendChild(item);
      } else {
        const button = text("button", "ack", "Acknowledge");
        button.type = "button";
        button.addEventListener("click", async () => {
          button.disabled = true;
          try {
            await connection.invoke("Acknowledge", a.id);
          } catch (e) {
            button.disabled = false;
            statusEl.textContent = `⚠ ${e.message}`;
          }
        });
        item.appendChild(button);
        bannerEl.appendChild(item);
      }
    }
    bannerEl.hidden = bannerEl.childElementCount === 0;
    ackedEl.hidden = ackedEl.childElementCount === 0;
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
