// The report script's shared part: colors, scales and "nice" ticks, SVG
// markup helpers, axes, legends, the tooltip, and the loop that draws every
// registered chart. Charts are built as SVG markup strings and set with
// innerHTML: the HTML parser puts them in the SVG namespace, so the page never
// spells out a namespace URL, and thousands of spans draw in one assignment.

(function () {
  'use strict';
  const D = (window.ddpscope = window.ddpscope || {});
  D.charts = [];
  // Communication is orange, compute is blue, everywhere.
  D.colors = {
    compute: '#4c78a8', comm: '#f58518', range: '#b8bec8', hidden: '#fdc98f',
    exposed: '#c4490a', line: '#2f3b52'
  };
  D.palette = ['#f58518', '#54a24b', '#b279a2', '#e45756', '#72b7b2', '#9d755d', '#eeca3b',
    '#ff9da6', '#2f3b52', '#bab0ac'];
  D.margin = { l: 74, r: 74, t: 14, b: 52 };

  const ENT = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  D.esc = (s) => String(s).replace(/[&<>"']/g, (c) => ENT[c]);
  const r2 = (v) => Math.round(v * 100) / 100;
  D.r2 = r2;

  D.scale = (d0, d1, p0, p1) => {
    const k = d1 === d0 ? 0 : (p1 - p0) / (d1 - d0);
    return (v) => p0 + (v - d0) * k;
  };
  // Ticks at 1, 2, 2.5 or 5 times a power of ten, about `count` of them.
  D.ticks = (lo, hi, count) => {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999);
    const out = [];
    for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
      out.push(+(i * step).toPrecision(12));
    }
    return out;
  };
  // A 0-based domain that ends on a tick, so the top gridline is labeled.
  D.niceDomain = (max, count) => {
    if (!(max > 0)) return { max: 1, ticks: [0, 0.5, 1] };
    const t = D.ticks(0, max, count);
    const step = t.length > 1 ? t[1] - t[0] : max;
    while (t[t.length - 1] < max * 0.9999) t.push(+(t[t.length - 1] + step).toPrecision(12));
    return { max: t[t.length - 1], ticks: t };
  };

  D.num = (v, digits) => {
    if (v == null || !isFinite(v)) return '-';
    const a = Math.abs(v), p = (x) => String(+x.toPrecision(digits || 3));
    if (a >= 1e9) return p(v / 1e9) + 'G';
    if (a >= 1e6) return p(v / 1e6) + 'M';
    if (a >= 1e4) return p(v / 1e3) + 'k';
    return p(v);
  };
  // One suffix for a whole axis ("0, 2k, ... 10k", never "8000, 10k").
  D.tickFmt = (ticks) => {
    const m = ticks.reduce((a, t) => Math.max(a, Math.abs(t)), 0);
    const unit = m >= 1e9 ? [1e9, 'G'] : m >= 1e6 ? [1e6, 'M'] : m >= 1e4 ? [1e3, 'k'] : [1, ''];
    return (v) => (v === 0 ? '0' : String(+(v / unit[0]).toPrecision(6)) + unit[1]);
  };
  D.ms = (v) => (v >= 1 ? D.num(v) + ' ms' : D.num(v * 1000) + ' \u00b5s');
  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  D.bytes = (b) => {
    let u = 0;
    while (b >= 1024 && u < 4) { b /= 1024; u++; }
    return (u ? String(+b.toPrecision(3)) : String(Math.round(b))) + ' ' + UNITS[u];
  };
  // The unit an axis of bytes up to `max` reads best in.
  D.byteUnit = (max) => {
    let u = 0;
    while (max >= 1536 && u < 4) { max /= 1024; u++; }
    return { div: Math.pow(1024, u), name: UNITS[u] };
  };

  D.svg = (w, h, label, body) =>
    `<svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${D.esc(label)}">${body}</svg>`;
  D.text = (x, y, s, cls, anchor) =>
    `<text x="${r2(x)}" y="${r2(y)}" class="${cls || ''}" text-anchor="${anchor || 'start'}">${D.esc(s)}</text>`;
  D.tipAttr = (tip) => (tip ? ` data-tip="${D.esc(tip)}"` : '');
  D.rect = (x, y, w, h, fill, tip, cls) =>
    `<rect x="${r2(x)}" y="${r2(y)}" width="${r2(Math.max(w, 0.6))}" height="${r2(Math.max(h, 0))}"` +
    ` fill="${fill}"${cls ? ` class="${cls}"` : ''}${D.tipAttr(tip)}/>`;
  D.line = (x1, y1, x2, y2, cls) =>
    `<line class="${cls}" x1="${r2(x1)}" y1="${r2(y1)}" x2="${r2(x2)}" y2="${r2(y2)}"/>`;

  // Bottom axis: o = {x: scale, ticks, y, x0, x1, fmt (optional), title}.
  D.axisX = (o) => {
    const fmt = o.fmt || D.tickFmt(o.ticks);
    let s = D.line(o.x0, o.y, o.x1, o.y, 'axis');
    for (const t of o.ticks) {
      const x = o.x(t);
      s += D.line(x, o.y, x, o.y + 5, 'tick') + D.text(x, o.y + 18, fmt(t), 'tick-label', 'middle');
    }
    if (o.title) s += D.text((o.x0 + o.x1) / 2, o.y + 40, o.title, 'axis-title', 'middle');
    return s;
  };
  // Vertical axis at x, left (side -1) or right (side 1) of the plot:
  // o = {y: scale, ticks, x, y0, y1, fmt, title, side, grid: [x0, x1]}.
  D.axisY = (o) => {
    const side = o.side || -1, fmt = o.fmt || D.tickFmt(o.ticks);
    let s = D.line(o.x, o.y0, o.x, o.y1, 'axis');
    for (const t of o.ticks) {
      const y = o.y(t);
      if (o.grid) s += D.line(o.grid[0], y, o.grid[1], y, 'grid');
      s += D.line(o.x, y, o.x + 5 * side, y, 'tick');
      s += D.text(o.x + 8 * side, y + 4, fmt(t), 'tick-label', side < 0 ? 'end' : 'start');
    }
    if (o.title) {
      const tx = r2(o.x + side * 56), ty = r2((o.y0 + o.y1) / 2);
      s += `<text class="axis-title" text-anchor="middle" transform="translate(${tx},${ty}) ` +
        `rotate(${side < 0 ? -90 : 90})">${D.esc(o.title)}</text>`;
    }
    return s;
  };
  // items: [{label, color, shape: 'line' | 'dot' | undefined}]
  D.legend = (items) => '<div class="legend">' + items.map((i) =>
    `<span class="key"><span class="swatch ${i.shape || ''}" style="background:${i.color}"></span>` +
    `${D.esc(i.label)}</span>`).join('') + '</div>';
  D.note = (text) => `<p class="note">${D.esc(text)}</p>`;
  D.empty = (el, msg) => { el.innerHTML = `<p class="empty">${D.esc(msg)}</p>`; };
  D.width = (el) => Math.max(360, Math.floor(el.clientWidth || 900));

  // One tooltip for the page, fed by the data-tip of whatever is under the mouse.
  D.attachTips = (el) => {
    if (el.dataset.tips) return;
    el.dataset.tips = '1';
    const box = () => document.getElementById('ddpscope-tooltip');
    el.addEventListener('mousemove', (e) => {
      const t = e.target.closest ? e.target.closest('[data-tip]') : null, b = box();
      if (!t) { b.hidden = true; return; }
      b.textContent = t.getAttribute('data-tip');
      b.hidden = false;
      const pad = 14, w = b.offsetWidth, h = b.offsetHeight;
      let x = e.clientX + pad, y = e.clientY + pad;
      if (x + w > window.innerWidth) x = Math.max(0, e.clientX - w - pad);
      if (y + h > window.innerHeight) y = Math.max(0, e.clientY - h - pad);
      b.style.left = x + 'px';
      b.style.top = y + 'px';
    });
    el.addEventListener('mouseleave', () => { box().hidden = true; });
  };

  // Draws every chart; one that throws is reported and replaced by a message,
  // and the others still draw.
  D.drawAll = () => {
    if (!D.data) D.data = JSON.parse(document.getElementById('ddpscope-data').textContent);
    for (const c of D.charts) {
      const el = document.getElementById(c.id);
      if (!el) { window.ddpscopeReport('no chart container #' + c.id); continue; }
      try {
        c.draw(el, D.data);
        D.attachTips(el);
        el.setAttribute('data-rendered', 'true');
      } catch (e) {
        window.ddpscopeReport(c.id + ': ' + ((e && e.stack) || e));
        D.empty(el, 'This chart could not be drawn: ' + e);
      }
    }
  };
  D.start = () => {
    D.drawAll();
    window.ddpscopeReady = true;
    document.body.setAttribute('data-ready', 'true');
    // Charts are drawn at the page's width: redraw when it changes.
    let width = window.innerWidth, timer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (window.innerWidth !== width) { width = window.innerWidth; D.drawAll(); }
      }, 150);
    });
  };
})();
