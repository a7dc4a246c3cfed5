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

  function tileOf(id) {
    let tile = document.getElementById(`tile-${id}`);
    if (!tile) {
      tile = text("article", "tile");
      tile.id = `tile-${id}`;
      tile.dataset.owner = id;
      tilesEl.appendChild(tile);
    }
    return tile;
  }

  function renderTile(t) {
    const tile = tileOf(t.ownerId);
    const previous = tile.dataset.vitalsAt;
    tile.replaceChildren();
    const head = text("header", "tile-head");
    const name = text("a", "name", t.name);
    name.href = `/students/${t.ownerId}`;
    head.appendChild(name);
    const checkIn = { in: ["✔", "checked in"], out: ["↩", "left"], "not-yet": ["✖", "not checked in"] }[t.checkIn] ?? ["?", t.checkIn];
    head.appendChild(text("span", `checkin checkin-${t.checkIn}`, `${checkIn[0]} ${checkIn[1]}`));
    tile.appendChild(head);
    if (t.openAlerts > 0) tile.appendChild(text("p", "tile-alert", `⚠ ${t.openAlerts} open alert${t.openAlerts > 1 ? "s" : ""}`));
    tile.classList.toggle("alerting", t.openAlerts > 0);
    const vitals = text("dl", "vitals");
    const row = (label, value, cls) => {
      vitals.appendChild(text("dt", null, label));
      vitals.appendChild(text("dd", cls, value));
    };
    row("♥ Heart", `${fmt(t.heartRate, 0)} bpm`, "hr");
    if (seesBp) row("BP", `${fmt(t.systolic, 0)}/${fmt(t.diastolic, 0)} mmHg`, "bp");
    row("Skin temp", `${fmt(t.skinTemperature, 1)} °C`, "temp");
    if (t.sway) {
      const s = t.sway;
      row("Sway", s.settling ? `settling (${s.posture})` : `${fmt(s.meanDistance * 100, 1)} cm · ${fmt(s.meanSpeed * 100, 1)} cm/s (${s.posture})`, "sway");
    }
    if (t.seat) {
      row("Seat", t.seat.occupied ? `occupied since ${time(t.seat.since)}` : `empty since ${time(t.seat.since)}`, t.seat.occupied ? "seat" : "seat empty");
    }
    tile.appendChild(vitals);
    const silent = t.devices.filter((d) => d.silent);
    const devices = text("p", silent.length ? "devices silent" : "devices",
      t.devices.length === 0 ? "no devices assigned"
        : silent.length ? `⚠ silent: ${silent.map((d) => `${d.serial} (${ago(d.lastReading)})`).join(", ")}`
        : `${t.devices.length} device${t.devices.length > 1 ? "s" : ""} sending`);
    tile.appendChild(devices);
    tile.appendChild(text("p", "updated", `vitals ${time(t.vitalsAt)}`));
    if (t.vitalsAt && t.vitalsAt !== previous) {
      tile.dataset.vitalsAt = t.vitalsAt;
      if (latency.length < 100000) latency.push(Date.now() - Date.parse(t.vitalsAt));
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
  connection.on("tiles", (tiles) => tiles.forEach(renderTile));
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
