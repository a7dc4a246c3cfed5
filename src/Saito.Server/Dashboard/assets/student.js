// The student page: charts of one student's range from /api/students/{id}/chart, alerts marked as vertical lines
// and listed in a table; refreshed every 15 s while the range includes now. Served from /static/student.js.
"use strict";
(() => {
  const root = document.getElementById("student");
  if (!root) return;
  const ownerId = Number(root.dataset.ownerId);
  const from = root.dataset.from;
  const to = root.dataset.to;
  const seesBp = root.dataset.seesBp === "true";
  const statusEl = document.getElementById("status");
  const missingEl = document.getElementById("missing");
  const truncatedEl = document.getElementById("truncated");
  const alertsBody = document.querySelector("#alerts tbody");
  const refreshMs = 15000;
  const hasUplot = typeof uPlot !== "undefined";
  const charts = new Map();
  let alerts = [];

  const pad = (n) => String(n).padStart(2, "0");
  const clock = (d) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const dateTime = (iso) => {
    if (!iso) return "";
    const d = new Date(iso);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(d)}:${pad(d.getSeconds())}`;
  };
  // Times written by the server in UTC, shown in this device's time zone.
  for (const t of document.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (!Number.isNaN(d.getTime())) t.textContent = t.dataset.short ? clock(d) : dateTime(t.getAttribute("datetime")).slice(0, 16);
  }

  const cell = (row, value) => {
    const td = document.createElement("td");
    td.textContent = value;
    row.appendChild(td);
  };

  function renderAlerts() {
    alertsBody.replaceChildren();
    if (alerts.length === 0) {
      const row = document.createElement("tr");
      const td = document.createElement("td");
      td.colSpan = 5;
      td.textContent = "✓ No alerts in this range.";
      row.appendChild(td);
      alertsBody.appendChild(row);
      return;
    }
    for (const a of alerts) {
      const row = document.createElement("tr");
      cell(row, `⚠ ${dateTime(a.raisedAt)}`);
      cell(row, a.kind);
      cell(row, a.detail);
      cell(row, a.acknowledgedBy ? `✔ ${a.acknowledgedBy}` : "✖ not acknowledged");
      cell(row, a.clearedAt ? `✓ ${dateTime(a.clearedAt)}` : "still open");
      alertsBody.appendChild(row);
    }
  }

  // A uPlot plugin: each alert in range as a vertical line at the time it was raised (dashed, ⚠; dotted ✓ when cleared).
  const alertMarkers = () => ({
    hooks: {
      draw: [
        (u) => {
          const ctx = u.ctx;
          const { top, height, left, width } = u.bbox;
          const dpr = window.devicePixelRatio || 1;
          ctx.save();
          ctx.font = `${Math.round(12 * dpr)}px system-ui, sans-serif`;
          for (const a of alerts) {
            const x = Math.round(u.valToPos(Date.parse(a.raisedAt) / 1000, "x", true));
            if (x < left || x > left + width) continue;
            ctx.strokeStyle = a.clearedAt ? "#59636e" : "#b3261e";
            ctx.fillStyle = ctx.strokeStyle;
            ctx.lineWidth = 2 * dpr;
            ctx.setLineDash(a.clearedAt ? [2 * dpr, 3 * dpr] : [6 * dpr, 4 * dpr]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.fillText(`${a.clearedAt ? "✓" : "⚠"} ${a.kind}`, x + 3 * dpr, top + 12 * dpr);
          }
          ctx.restore();
        },
      ],
    },
  });

  const width = (el) => Math.max(280, el.clientWidth - 16);

  // One chart: its series as [[unixMs, value], ...] lists, all on one x axis (seconds).
  function draw(id, title, unit, series, lists, digits) {
    const el = document.getElementById(id);
    if (!el) return;
    const xs = [...new Set(lists.flatMap((l) => l.map((p) => p[0])))].sort((a, b) => a - b);
    const data = [xs.map((x) => x / 1000)];
    for (const list of lists) {
      const byX = new Map(list.map((p) => [p[0], p[1]]));
      data.push(xs.map((x) => (byX.has(x) ? byX.get(x) : null)));
    }
    let empty = el.querySelector(".empty");
    if (xs.length === 0) {
      if (!empty) {
        empty = document.createElement("p");
        empty.className = "empty status";
        el.appendChild(empty);
      }
      empty.textContent = "No readings in this range.";
    } else if (empty) {
      empty.remove();
    }
    const existing = charts.get(id);
    if (existing) {
      existing.setData(data);
      existing.redraw(false);
      return;
    }
    const opts = {
      title: undefined,
      width: width(el),
      height: 220,
      scales: { x: { time: true, min: Date.parse(from) / 1000, max: Date.parse(to) / 1000, auto: false } },
      axes: [{}, { label: unit, size: 60, values: (u, ticks) => ticks.map((v) => v.toFixed(digits)) }],
      series: [{ label: "Time" }, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, dash: s.dash, points: { show: false }, spanGaps: false,
        value: (u, v) => (v === null || v === undefined ? "–" : `${v.toFixed(digits)} ${unit}`) }))],
      plugins: [alertMarkers()],
    };
    const chart = new uPlot(opts, data, el);
    chart.root.setAttribute("aria-label", title);
    charts.set(id, chart);
  }

  function render(body) {
    alerts = body.alerts || [];
    renderAlerts();
    truncatedEl.hidden = !body.swayTruncated;
    if (!hasUplot) return;
    const cm = (body.sway || []).map((p) => [p[0], p[1] * 100]);
    draw("chart-hr", "Heart rate", "bpm", [{ label: "Heart rate", stroke: "#b3261e" }], [body.heartRate || []], 0);
    if (seesBp) {
      draw("chart-bp", "Blood pressure", "mmHg",
        [{ label: "▲ Systolic", stroke: "#0b57d0" }, { label: "▼ Diastolic", stroke: "#1a7f37", dash: [6, 4] }],
        [body.systolic || [], body.diastolic || []], 0);
    }
    draw("chart-temp", "Skin temperature", "°C", [{ label: "Skin temperature", stroke: "#9a6700" }], [body.skinTemperature || []], 1);
    draw("chart-sway", "Head sway", "cm", [{ label: "Mean distance", stroke: "#6f42c1" }], [cm], 1);
    draw("chart-seat", "Seat pressure", "kPa", [{ label: "Total load", stroke: "#1b1f24" }], [body.seatPressure || []], 1);
  }

  const includesNow = () => Date.parse(from) <= Date.now() && Date.now() < Date.parse(to);

  async function load() {
    const url = `/api/students/${ownerId}/chart?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.status === 401) {
        statusEl.textContent = "⚠ Signed out: sign in again to see the charts.";
        return;
      }
      if (response.status === 403) {
        statusEl.textContent = "⚠ You may not see this student's vitals.";
        return;
      }
      if (!response.ok) {
        statusEl.textContent = `⚠ Could not load the charts (HTTP ${response.status}).`;
        return;
      }
      render(await response.json());
      const live = includesNow();
      statusEl.textContent = live ? `● Live: updated ${clock(new Date())}, every 15 s` : `✔ Loaded ${clock(new Date())}`;
    } catch (e) {
      statusEl.textContent = `⚠ Could not load the charts (${e.message}); trying again.`;
    }
    if (includesNow()) setTimeout(load, refreshMs);
  }

  if (!hasUplot) {
    missingEl.hidden = false;
  }

  let resizeTimer;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const [id, chart] of charts) {
        const el = document.getElementById(id);
        if (el) chart.setSize({ width: width(el), height: 220 });
      }
    }, 200);
  });

  load();
})();
