// The report's rank-by-time charts: the per-iteration timeline of compute and
// communication, and the straggler heatmap. The last part of the script, so
// it also starts the drawing.

(function () {
  'use strict';
  const D = window.ddpscope, C = D.colors;
  const S_RANK = 0, S_ITER = 1, S_KIND = 2, S_NAME = 3, S_START = 4, S_END = 5;

  // Iterations laid side by side, each as wide as it lasted: the sample may
  // skip iterations, and real time between them would squeeze spans to nothing.
  function layoutIterations(spans, x0, x1) {
    const segs = new Map();
    for (const s of spans) {
      const g = segs.get(s[S_ITER]);
      if (!g) segs.set(s[S_ITER], { it: s[S_ITER], lo: s[S_START], hi: s[S_END] });
      else { g.lo = Math.min(g.lo, s[S_START]); g.hi = Math.max(g.hi, s[S_END]); }
    }
    const order = [...segs.values()].sort((a, b) => a.lo - b.lo);
    const gap = Math.min(14, ((x1 - x0) * 0.15) / Math.max(1, order.length - 1));
    const total = order.reduce((a, g) => a + Math.max(g.hi - g.lo, 1e-6), 0);
    const k = (x1 - x0 - gap * (order.length - 1)) / total;
    let x = x0;
    for (const g of order) {
      g.x = x;
      g.w = Math.max(g.hi - g.lo, 1e-6) * k;
      x += g.w + gap;
    }
    return { segs, order, k, gap };
  }

  function kindColor(kind) {
    return kind === 'compute' ? C.compute : kind === 'comm' ? C.comm : C.range;
  }
  function kindLabel(kind) { return kind === 'comm' ? 'communication' : kind; }

  // Per-iteration separators, labels on top and local "ms since start" ticks below.
  function iterationAxes(lay, top, bottom) {
    let s = '';
    lay.order.forEach((g, i) => {
      if (i > 0) s += D.line(g.x - lay.gap / 2, top - 16, g.x - lay.gap / 2, bottom, 'sep');
      if (g.w > 34 || i === 0) s += D.text(g.x + 2, top - 6, `iter ${g.it}`, 'tick-label', 'start');
      const dur = g.hi - g.lo;
      for (const t of D.ticks(0, dur, Math.max(1, Math.floor(g.w / 70)))) {
        const x = g.x + t * lay.k;
        s += D.line(x, bottom, x, bottom + 5, 'tick');
        if (g.w > 24) s += D.text(x, bottom + 18, D.num(t), 'tick-label', 'middle');
      }
    });
    return s + D.line(lay.order[0].x, bottom, lay.order[lay.order.length - 1].x +
      lay.order[lay.order.length - 1].w, bottom, 'axis');
  }

  function timeline(el, data) {
    const tl = data.timeline, spans = tl.spans;
    if (!spans.length) {
      return D.empty(el, data.iterations ? 'no timeline spans recorded' : 'no iterations detected');
    }
    const ranks = [...new Set(spans.map((s) => s[S_RANK]))].sort((a, b) => a - b);
    const W = D.width(el), L = 70, R = 16, T = 26;
    // Per rank: a thin strip for ranges (NVTX), then the compute and comm lanes.
    const n = ranks.length, lane = n > 128 ? 2 : n > 32 ? 4 : n > 12 ? 9 : 14;
    const strip = lane > 4 ? 4 : 0, rowH = 2 * lane + strip + (lane > 4 ? 8 : 3);
    const bottom = T + rowH * ranks.length, H = bottom + 50;
    const lay = layoutIterations(spans, L, W - R);
    const rowOf = new Map(ranks.map((r, i) => [r, i]));
    const labelEvery = Math.ceil(14 / rowH);
    let s = '';
    ranks.forEach((r, i) => {
      s += `<rect class="row-bg${i % 2 ? ' odd' : ''}" x="${L}" y="${T + i * rowH}" ` +
        `width="${W - L - R}" height="${rowH}"/>`;
      if (i % labelEvery === 0) s += D.text(L - 8, T + i * rowH + rowH / 2 + 4, `rank ${r}`, 'tick-label', 'end');
    });
    // Other kinds (ranges) first, so compute and communication draw over them
    // where rows are too small for a strip of their own.
    const kinds = new Set();
    for (const pass of [0, 1]) {
      for (const sp of spans) {
        const kind = tl.kinds[sp[S_KIND]], main = kind === 'compute' || kind === 'comm';
        if (main !== (pass === 1)) continue;
        kinds.add(kind);
        const g = lay.segs.get(sp[S_ITER]), dur = sp[S_END] - sp[S_START];
        const top = T + rowOf.get(sp[S_RANK]) * rowH + (lane > 4 ? 3 : 1);
        const y = main ? top + strip + 1 + (kind === 'comm' ? lane : 0) : top;
        const h = main ? lane - 1 : Math.max(strip, lane - 1);
        const tip = `${tl.names[sp[S_NAME]]}\n${kindLabel(kind)} on rank ${sp[S_RANK]}, iteration ` +
          `${sp[S_ITER]}\n${D.ms(dur)}, at +${D.ms(sp[S_START] - g.lo)}`;
        s += D.rect(g.x + (sp[S_START] - g.lo) * lay.k, y, dur * lay.k, h, kindColor(kind), tip);
      }
    }
    s += iterationAxes(lay, T, bottom);
    s += D.text((L + W - R) / 2, bottom + 40, 'time since each iteration\'s start (ms)', 'axis-title', 'middle');
    const order = ['compute', 'comm', ...[...kinds].filter((k) => k !== 'compute' && k !== 'comm')];
    let html = D.legend(order.map((k) => ({ label: kindLabel(k), color: kindColor(k) })));
    html += D.svg(W, H, 'compute and communication per rank and iteration', s);
    if (tl.omitted) html += D.note(`${tl.omitted} further spans are not shown.`);
    el.innerHTML = html;
  }

  // White to dark red (ColorBrewer YlOrRd).
  const HEAT = ['#ffffcc', '#ffeda0', '#fed976', '#feb24c', '#fd8d3c', '#fc4e2a', '#e31a1c', '#b10026'];
  D.heat = (t) => {
    const f = Math.min(Math.max(t, 0), 1) * (HEAT.length - 1), i = Math.min(Math.floor(f), HEAT.length - 2);
    const a = HEAT[i], b = HEAT[i + 1], u = f - i;
    const ch = (c, o) => parseInt(c.substr(o, 2), 16);
    const mix = (o) => Math.round(ch(a, o) + (ch(b, o) - ch(a, o)) * u);
    return `rgb(${mix(1)},${mix(3)},${mix(5)})`;
  };

  function heatLegend(x, y, vmax) {
    let s = '<defs><linearGradient id="ds-heat" x1="0" x2="1" y1="0" y2="0">' +
      HEAT.map((c, i) => `<stop offset="${i / (HEAT.length - 1)}" stop-color="${c}"/>`).join('') +
      '</linearGradient></defs>';
    const w = 260, sc = D.scale(0, vmax, x, x + w);
    s += `<rect x="${x}" y="${y}" width="${w}" height="12" fill="url(#ds-heat)" stroke="#c9ced6"/>`;
    s += D.axisX({ x: sc, ticks: D.ticks(0, vmax, 4), y: y + 12, x0: x, x1: x + w,
      title: 'ms late entering collectives' });
    return s;
  }

  function heatmap(el, data) {
    const h = data.heatmap;
    if (!h.cells.length || !h.iters) return D.empty(el, 'no iterations detected');
    const rows = h.cells.length, cols = h.cells[0].length, rs = h.rank_step, is = h.iter_step;
    const W = D.width(el), L = 90, R = 16, T = 8;
    const cw = (W - L - R) / cols, ch = rows <= 16 ? 26 : Math.max(3, Math.min(18, 480 / rows));
    const bottom = T + rows * ch, H = bottom + 120;
    let vmax = 0;
    for (const row of h.cells) for (const v of row) if (v > vmax) vmax = v;
    const rankName = (r) => (rs > 1 ? `ranks ${r * rs}\u2013${Math.min(h.ranks, (r + 1) * rs) - 1}` : `rank ${r}`);
    const iterName = (c) => (is > 1 ? `iterations ${c * is}\u2013${Math.min(h.iters, (c + 1) * is) - 1}` : `iteration ${c}`);
    let s = '';
    const labelEvery = Math.ceil(14 / ch);
    h.cells.forEach((row, r) => {
      if (r % labelEvery === 0) s += D.text(L - 8, T + r * ch + ch / 2 + 4, rankName(r), 'tick-label', 'end');
      row.forEach((v, c) => {
        const fill = v == null ? '#eceef1' : D.heat(vmax > 0 ? v / vmax : 0);
        const tip = `${rankName(r)}, ${iterName(c)}\n` + (v == null ? 'no data' : `${D.num(v)} ms late`);
        s += D.rect(L + c * cw, T + r * ch, cw + 0.3, ch + 0.3, fill, tip);
      });
    });
    const xs = (i) => L + (i / is + 0.5) * cw;
    const xt = D.ticks(0, h.iters - 1, Math.max(2, Math.floor((W - L - R) / 70))).filter((t) => t % 1 === 0);
    s += D.axisX({ x: xs, ticks: xt, y: bottom, x0: L, x1: W - R, fmt: String, title: 'iteration' });
    s += heatLegend(L, bottom + 62, vmax > 0 ? vmax : 1);
    let html = D.svg(W, H, 'lateness per rank and iteration', s);
    if (rs > 1 || is > 1) {
      html += D.note(`Each cell: mean over ${is} iteration(s), the latest of ${rs} rank(s).`);
    }
    el.innerHTML = html;
  }

  D.charts.unshift({ id: 'chart-timeline', draw: timeline });
  D.charts.push({ id: 'chart-heatmap', draw: heatmap });
  D.start();
})();
