// The state page, live: it listens to state/events and redraws the
// sections the server drew, with the same markup. Text is only ever set
// as text, never parsed as HTML.
"use strict";
(function () {
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== "") e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function none(text) { return el("p", { "class": "none" }, text); }
  function table(cls, heads, rows) {
    var t = el("table", { "class": cls }), th = el("thead"), hr = el("tr"), tb = el("tbody");
    heads.forEach(function (h) { hr.appendChild(el("th", null, h)); });
    th.appendChild(hr); t.appendChild(th);
    rows.forEach(function (r) { tb.appendChild(r); });
    t.appendChild(tb);
    return t;
  }
  function row(cells, attrs) {
    var tr = el("tr", attrs);
    cells.forEach(function (c) { tr.appendChild(c instanceof Node ? c : el("td", null, c)); });
    return tr;
  }
  function code(text) { var td = el("td"); td.appendChild(el("code", null, text)); return td; }
  function value(text) { return el("td", { "class": "value" }, text); }
  function time(iso) {
    var d = new Date(iso);
    return isNaN(d) ? "" : d.toISOString().substring(11, 23);
  }

  function drawTools(tools) {
    var box = el("div", { id: "tools" });
    if (!tools.length) box.appendChild(none("No layer publishes its state yet."));
    tools.forEach(function (t) {
      var s = el("section", { "class": "tool", "data-tool": t.name }), h = el("h3");
      h.appendChild(el("span", { "class": "name" }, t.name));
      if (t.breaker) {
        h.appendChild(document.createTextNode(" "));
        h.appendChild(el("span", { "class": "breaker breaker-" + t.breaker }, t.breaker));
      }
      s.appendChild(h);
      var t2 = el("table", { "class": "series" }), tb = el("tbody");
      t.series.forEach(function (v) {
        var tr = el("tr", { "data-instrument": v.instrument, "data-detail": v.detail || "" });
        tr.setAttribute("data-detail", v.detail || "");
        tr.appendChild(el("th", null, v.label + (v.detail ? " (" + v.detail + ")" : "")));
        tr.appendChild(value(v.text));
        tb.appendChild(tr);
      });
      t2.appendChild(tb); s.appendChild(t2); box.appendChild(s);
    });
    return box;
  }
  function drawStores(stores) {
    var box = el("div", { id: "stores" });
    if (!stores.length) { box.appendChild(none("No store has failed.")); return box; }
    box.appendChild(table("", ["Port", "Failed operations", "Calls decided without the store", "By operation"],
      stores.map(function (s) {
        var ops = el("td");
        s.by_operation.forEach(function (o) {
          ops.appendChild(el("span", { "class": "op" }, o.operation + ": " + o.errors));
          ops.appendChild(document.createTextNode(" "));
        });
        return row([s.port, value(s.errors), value(s.degraded), ops], { "data-port": s.port });
      })));
    return box;
  }
  function drawFailures(f) {
    var box = el("div", { id: "failures" });
    if (!f) { box.appendChild(none("Failures are not recorded (console.WithFailures).")); return box; }
    box.appendChild(el("p", { "class": "total" }, f.total + " failed call(s) counted."));
    if (f.counts.length) box.appendChild(table("counts", ["Tool", "Kind", "Code", "Count"], f.counts.map(function (c) {
      return row([c.tool, c.kind, code(c.code), value(c.count)]);
    })));
    if (f.recent.length) box.appendChild(table("recent", ["Time", "Tool", "Outcome", "Kind", "Code", "Retryable", "Attempts", "Degraded"],
      f.recent.map(function (r) {
        return row([time(r.time), r.tool, r.outcome, r.kind, code(r.code), r.retryable ? "yes" : "no", value(r.attempts), r.degraded || ""]);
      })));
    return box;
  }
  function replace(id, node) {
    var old = document.getElementById(id);
    if (old) old.replaceWith(node);
  }
  function draw(v) {
    var at = document.getElementById("at");
    at.setAttribute("datetime", v.at);
    at.textContent = v.at.replace("T", " ");
    replace("tools", drawTools(v.tools || []));
    replace("stores", drawStores(v.stores || []));
    replace("failures", drawFailures(v.failures));
  }
  function live(on) {
    var l = document.getElementById("live");
    l.textContent = on ? "live" : "reconnecting";
    l.setAttribute("data-live", on ? "yes" : "no");
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (!window.EventSource) return;
    var src = new EventSource("state/events");
    src.addEventListener("state", function (e) {
      try { draw(JSON.parse(e.data)); live(true); } catch (err) { live(false); }
    });
    src.onopen = function () { live(true); };
    src.onerror = function () { live(false); };
  });
})();
