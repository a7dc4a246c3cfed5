// The check-in board: every 10 s, read the board's state (?handler=state) and update each student's line and button,
// so check-ins at the fingerprint reader appear without a reload. Served from /static/checkin.js.
"use strict";
(() => {
  const root = document.getElementById("checkin");
  if (!root) return;
  const url = root.dataset.stateUrl;
  const refreshEl = document.getElementById("refresh");
  const presentEl = document.getElementById("present");
  const everyMs = 10_000;

  function apply(state) {
    let present = 0;
    for (const s of state.students) {
      if (s.state === "in") present++;
      const li = document.getElementById(`student-${s.ownerId}`);
      if (!li) continue;
      if (li.dataset.state !== s.state) {
        li.dataset.state = s.state;
        li.className = `person state-${s.state}${s.state === "in" ? " in" : ""}`;
        li.querySelector(".do-in").hidden = s.state === "in";
        li.querySelector(".do-out").hidden = s.state !== "in";
      }
      const text = li.querySelector(".state");
      if (text.textContent !== s.stateText) text.textContent = s.stateText;
    }
    presentEl.textContent = String(present);
    refreshEl.textContent = `Updated ${new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })} (every 10 s; fingerprint check-ins appear by themselves).`;
    root.dataset.refreshed = String(Number(root.dataset.refreshed || "0") + 1);
  }

  async function refresh() {
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, redirect: "error" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      apply(await response.json());
    } catch (e) {
      refreshEl.textContent = `⚠ Could not refresh the board (${e.message}); trying again in 10 s.`;
    } finally {
      setTimeout(refresh, everyMs);
    }
  }

  setTimeout(refresh, everyMs);
})();
