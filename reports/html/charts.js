// The report's per-bucket and per-size charts: bytes and duration per bucket,
// bus bandwidth against message size, and how much of each bucket's
// communication compute hides.

(function () {
  'use strict';
  const D = window.ddpscope, C = D.colors, M = D.margin;
  const noBuckets = (el, data) =>
    D.empty(el, data.iterations ? 'no DDP buckets detected' : 'no iterations detected');
  const maxOf = (xs) => xs.reduce((a, b) => Math.max(a, b), 0);

  // Bucket index labels, thinned so they never overlap.
  function bucketAxis(b, x, y, x0, x1) {
    const every = Math.ceil(b.length / Math.max(1, Math.floor((x1 - x0) / 34)));
    const ticks = b.map((d, i) => i).filter((i) => i % every === 0);
    return D.axisX({ x, ticks, y, x0, x1, fmt: (i) => String(b[i].index),
      title: 'bucket index (DDP reduction order)' });
  }

  function bucketTip(d) {
    return `bucket ${d.index}: ${D.bytes(d.bytes)}\nmedian ${D.num(d.median_us)} \u00b5s, ` +
      `p95 ${D.num(d.p95_us)} \u00b5s\nbusbw ${D.num(d.busbw)} GB/s, ${d.calls} calls`;
  }

  function buckets(el, data) {
    const b = data.buckets;
    if (!b.length) return noBuckets(el, data);
    const W = D.width(el), H = 300, x0 = M.l, x1 = W - M.r, y0 = H - M.b, y1 = M.t;
    const unit = D.byteUnit(maxOf(b.map((d) => d.bytes)));
    const yb = D.niceDomain(maxOf(b.map((d) => d.bytes)) / unit.div, 5);
    const yt = D.niceDomain(maxOf(b.map((d) => d.median_us)), 5);
    const ys = D.scale(0, yb.max, y0, y1), yr = D.scale(0, yt.max, y0, y1);
    const band = (x1 - x0) / b.length, bw = Math.max(1, Math.min(band * 0.7, 80));
    const cx = (i) => x0 + band * (i + 0.5);
    let s = D.axisY({ y: ys, ticks: yb.ticks, x: x0, y0, y1,
      title: `bucket size (${unit.name})`, grid: [x0, x1] });
    s += D.axisY({ y: yr, ticks: yt.ticks, x: x1, y0, y1, side: 1,
      title: 'median duration (\u00b5s)' });
    b.forEach((d, i) => {
      const top = ys(d.bytes / unit.div);
      s += D.rect(cx(i) - bw / 2, top, bw, y0 - top, C.comm, bucketTip(d));
    });
    const pts = b.map((d, i) => `${D.r2(cx(i))},${D.r2(yr(d.median_us))}`).join(' ');
    s += `<polyline class="series" stroke="${C.line}" points="${pts}"/>`;
    b.forEach((d, i) => {
      s += `<circle cx="${D.r2(cx(i))}" cy="${D.r2(yr(d.median_us))}" r="4" fill="${C.line}"` +
        ` stroke="#fff" stroke-width="1.5"${D.tipAttr(bucketTip(d))}/>`;
    });
    s += bucketAxis(b, cx, y0, x0, x1);
    el.innerHTML = D.legend([{ label: 'bytes per bucket', color: C.comm },
      { label: 'median duration (right axis)', color: C.line, shape: 'line' }]) +
      D.svg(W, H, 'bytes and median duration per bucket', s);
  }

  // One series per op (and per communicator size, when an op ran on several).
  function sizeSeries(sizes) {
    const nranks = new Map();
    for (const d of sizes) nranks.set(d.op, (nranks.get(d.op) || new Set()).add(d.nranks));
    const series = new Map();
    for (const d of sizes) {
      const label = nranks.get(d.op).size > 1 ? `${d.op} (${d.nranks} ranks)` : d.op;
      if (!series.has(label)) series.set(label, []);
      series.get(label).push(d);
    }
    return [...series.entries()].map(([label, pts], i) => ({
      label, color: D.palette[i % D.palette.length],
      pts: pts.sort((a, b) => a.bytes - b.bytes)
    }));
  }

  function bandwidth(el, data) {
    const sizes = data.sizes.filter((d) => d.bytes > 0);
    if (!sizes.length) return D.empty(el, 'no collectives recorded');
    const W = D.width(el), H = 320, x0 = M.l, x1 = W - 28, y0 = H - M.b, y1 = M.t;
    const l2 = sizes.map((d) => Math.log2(d.bytes));
    let lo = Math.floor(Math.min(...l2)), hi = Math.ceil(Math.max(...l2));
    if (hi - lo < 2) { lo -= 1; hi += 1; }
    // Half a power of two of room each side, so no point sits on an axis.
    const xs = D.scale(lo - 0.5, hi + 0.5, x0, x1), x = (bytes) => xs(Math.log2(bytes));
    const yd = D.niceDomain(maxOf(sizes.map((d) => d.busbw)), 5), ys = D.scale(0, yd.max, y0, y1);
    const stride = Math.ceil((hi - lo + 1) / Math.max(2, Math.floor((x1 - x0) / 64)));
    const xt = [];
    for (let e = lo; e <= hi; e += stride) xt.push(e);
    let s = D.axisY({ y: ys, ticks: yd.ticks, x: x0, y0, y1, title: 'bus bandwidth (GB/s)',
      grid: [x0, x1] });
    s += D.axisX({ x: xs, ticks: xt, y: y0, x0, x1, fmt: (e) => D.bytes(Math.pow(2, e)),
      title: 'message size (bytes, log scale)' });
    const series = sizeSeries(sizes);
    for (const sr of series) {
      const pts = sr.pts.map((d) => `${D.r2(x(d.bytes))},${D.r2(ys(d.busbw))}`).join(' ');
      if (sr.pts.length > 1) s += `<polyline class="series" stroke="${sr.color}" points="${pts}"/>`;
      for (const d of sr.pts) {
        const tip = `${d.op}, ${D.bytes(d.bytes)} on ${d.nranks} ranks\nbusbw ${D.num(d.busbw)} GB/s, ` +
          `algbw ${D.num(d.algbw)} GB/s\nmedian ${D.num(d.median_us)} \u00b5s over ${d.calls} calls`;
        s += `<circle cx="${D.r2(x(d.bytes))}" cy="${D.r2(ys(d.busbw))}" r="4.5" fill="${sr.color}"` +
          ` stroke="#fff" stroke-width="1.5"${D.tipAttr(tip)}/>`;
      }
    }
    el.innerHTML = D.legend(series.map((sr) => ({ label: sr.label, color: sr.color, shape: 'dot' }))) +
      D.svg(W, H, 'bus bandwidth against message size', s);
  }

  function overlap(el, data) {
    const b = data.buckets;
    if (!b.length) return noBuckets(el, data);
    const W = D.width(el), H = 300, x0 = M.l, x1 = W - 28, y0 = H - M.b, y1 = M.t;
    const yd = D.niceDomain(maxOf(b.map((d) => d.hidden_us + d.exposed_us)), 5);
    const ys = D.scale(0, yd.max, y0, y1);
    const band = (x1 - x0) / b.length, bw = Math.max(1, Math.min(band * 0.7, 80));
    const cx = (i) => x0 + band * (i + 0.5);
    let s = D.axisY({ y: ys, ticks: yd.ticks, x: x0, y0, y1, title: 'time (\u00b5s)',
      grid: [x0, x1] });
    b.forEach((d, i) => {
      const tip = `bucket ${d.index}: ${D.num(d.overlap_pct)}% hidden behind compute\n` +
        `hidden ${D.num(d.hidden_us)} \u00b5s, exposed ${D.num(d.exposed_us)} \u00b5s`;
      const mid = ys(d.hidden_us), top = ys(d.hidden_us + d.exposed_us);
      s += D.rect(cx(i) - bw / 2, mid, bw, y0 - mid, C.hidden, tip);
      s += D.rect(cx(i) - bw / 2, top, bw, mid - top, C.exposed, tip);
    });
    s += bucketAxis(b, cx, y0, x0, x1);
    el.innerHTML = D.legend([{ label: 'hidden behind compute', color: C.hidden },
      { label: 'exposed (on the critical path)', color: C.exposed }]) +
      D.svg(W, H, 'hidden and exposed communication per bucket', s);
  }

  D.charts.push({ id: 'chart-buckets', draw: buckets });
  D.charts.push({ id: 'chart-bandwidth', draw: bandwidth });
  D.charts.push({ id: 'chart-overlap', draw: overlap });
})();
