/**
 * Training log (browser side; host: src/panels/trainingLogPanel.ts): the loss against the update
 * axis on the shared chart (webview/shared/chart.ts), the step convention written on the axis,
 * spikes as dashed markers and as a list (threshold and window adjustable), one optional statistic
 * on a second axis. Click a spike in the list (or a point of the chart) → Inspect Updates Around
 * that update. Everything from the file (names, columns) is inserted as text.
 */
import { fmt, h } from './common';
import { Chart, ChartSeries } from './shared/chart';
import { panelChannel } from './shared/panel';
import type { Spike } from '../src/core/trainingLog/spikes';
import type { LogLoaded, LogState, TrainingLogProtocol } from '../src/protocol/workbench';
import type { StatColumn } from '../src/core/stats';

const ch = panelChannel<TrainingLogProtocol, LogState>();

let log: LogLoaded | undefined;
let spikes: Spike[] = [];
let overlay: { label: string; updates: number[]; values: (number | null)[]; sampled: boolean } | undefined;
let chart: Chart | undefined;

const app = document.getElementById('app')!;
const title = h('h2', { class: 'wb-title' });
const axisNote = h('div', { class: 'wb-axis-note' });
const summary = h('ul', { class: 'wb-summary muted' });
const notice = h('p', { class: 'banner', role: 'status', hidden: true });
const chartBox = h('div', { class: 'wb-chart' });
const thresholdField = h('input', {
  type: 'number',
  min: 0.5,
  step: 0.5,
  class: 'wb-num',
  'aria-label': 'Spike threshold (robust z-score)',
});
const windowField = h('input', {
  type: 'number',
  min: 3,
  step: 1,
  class: 'wb-num',
  'aria-label': 'Window (previous points for the rolling median)',
});
const overlaySelect = h('select', { class: 'wb-select', 'aria-label': 'Statistic on the second axis' });
const pngBtn = h('button', { class: 'wb-btn secondary', type: 'button' }, 'Save PNG');
const spikeHead = h('h3', {}, 'Spikes');
const spikeList = h('ol', { class: 'wb-spikes', 'aria-label': 'Spikes: click one to inspect the updates around it' });
app.append(
  title,
  axisNote,
  summary,
  notice,
  h(
    'div',
    { class: 'wb-head' },
    h('label', { title: 'A point is a spike when (loss − rolling median) / (1.4826 · MAD) ≥ this' }, 'threshold z ≥ ', thresholdField),
    h('label', { title: 'How many previous finite points the rolling median and MAD use' }, ' window ', windowField),
    h('label', {}, ' second axis ', overlaySelect),
    pngBtn,
  ),
  chartBox,
  spikeHead,
  spikeList,
);

const sendThreshold = () => {
  const t = Number(thresholdField.value),
    w = Number(windowField.value);
  if (!(t > 0) || !Number.isInteger(w) || w < 3) return;
  ch.setState({ threshold: t, window: w });
  ch.post({ type: 'threshold', threshold: t, window: w });
};
thresholdField.addEventListener('change', sendThreshold);
windowField.addEventListener('change', sendThreshold);
overlaySelect.addEventListener('change', () => {
  const v = overlaySelect.value === '' ? null : (overlaySelect.value as StatColumn);
  ch.setState({ overlay: v });
  if (v) showNotice(`computing ${overlaySelect.selectedOptions[0]?.textContent ?? v}…`, 'info');
  ch.post({ type: 'overlay', column: v });
});
pngBtn.addEventListener('click', () => {
  if (chart && log) ch.exportFile({ format: 'png', fileName: `${log.fileName}-loss.png`, data: chart.toPng() });
});

function showNotice(msg: string | undefined, level: 'info' | 'error' = 'info'): void {
  notice.hidden = !msg;
  notice.textContent = msg ?? '';
  notice.className = level === 'error' ? 'banner error' : 'banner';
}

function inspect(update: number): void {
  ch.post({ type: 'inspect', update });
}

/** Overlay values aligned to the chart's x: each x takes the value of the nearest computed update. */
function overlayValues(x: number[]): (number | null)[] {
  if (!overlay || !overlay.updates.length) return [];
  const u = overlay.updates;
  let j = 0;
  return x.map((xi) => {
    if (xi < u[0] - 0.5 || xi > u[u.length - 1] + 0.5) return null;
    while (j + 1 < u.length && Math.abs(u[j + 1] - xi) <= Math.abs(u[j] - xi)) j++;
    return overlay!.values[j];
  });
}

function drawChart(): void {
  if (!log) return;
  if (!chart) {
    chart = new Chart({
      title: `Loss · ${log.fileName}`,
      // Short enough for the axis at 1280 px; the step convention is said in the note under the chart.
      xLabel: 'update (0-based)',
      yLabel: log.lossColumn,
      y2Label: overlay?.label,
      height: 320,
      xKey: 'update',
      bucketLabel: (i) => `update ${fmt(log!.x[i])}`,
      onSelect: (i) => inspect(log!.x[i]),
    });
    chartBox.replaceChildren(chart.element);
  }
  const series: ChartSeries[] = [{ label: log.lossColumn, values: log.y }];
  if (overlay)
    series.push({ label: `${overlay.label}${overlay.sampled ? ' (sampled)' : ''}`, values: overlayValues(log.x), axis: 'right' });
  chart.setData({ x: log.x, series });
  chart.setMarkers(spikes.map((s) => ({ x: s.update, label: s.kind === 'spike' ? `spike z ${s.scoreText}` : `loss ${s.lossText}` })));
}

function renderSpikes(): void {
  const n = log?.numUpdates ?? 0;
  spikeHead.textContent = `Spikes (${fmt(spikes.filter((s) => s.kind === 'spike').length)} at z ≥ ${thresholdField.value}; ${fmt(spikes.filter((s) => s.kind === 'non-finite').length)} non-finite)`;
  const items = spikes.map((s) => {
    const inData = s.update >= 0 && s.update < n;
    const text =
      s.kind === 'spike'
        ? `update ${fmt(s.update)} (logged step ${fmt(s.step)}): loss ${Number(s.lossText).toPrecision(5)}, z ${s.scoreText}${s.lastStep > s.firstStep ? `, steps ${fmt(s.firstStep)}–${fmt(s.lastStep)}` : ''}`
        : `update ${fmt(s.update)} (logged step ${fmt(s.step)}): loss is ${s.lossText}`;
    const btn = h(
      'button',
      {
        class: `wb-spike ${s.kind}`,
        type: 'button',
        'data-update': s.update,
        disabled: !inData,
        title: inData ? `Inspect updates around ${fmt(s.update)}` : 'No data: this update is outside the dataset',
      },
      text,
    );
    btn.addEventListener('click', () => inspect(s.update));
    return h('li', {}, btn);
  });
  spikeList.replaceChildren(...(items.length ? items : [h('li', { class: 'muted' }, 'No spike at this threshold.')]));
}

ch.onMessage((m) => {
  switch (m.type) {
    case 'log': {
      const fresh = !log || log.conventionText !== m.conventionText || log.fileName !== m.fileName;
      log = m;
      title.textContent = `${m.fileName}: ${m.lossColumn} against ${m.stepColumn}`;
      axisNote.textContent = `x axis: update (0-based), ${m.conventionText}. Change with the setting tokenShards.trainingLog.stepConvention.`;
      summary.replaceChildren(...m.summary.map((s) => h('li', {}, s)));
      thresholdField.value = String(ch.state?.threshold ?? m.threshold);
      windowField.value = String(ch.state?.window ?? m.window);
      overlaySelect.replaceChildren(
        h('option', { value: '' }, '(none)'),
        ...m.columns.map((c) => h('option', { value: c.key, title: c.definition }, c.label)),
      );
      if (fresh && chart) {
        chart.destroy();
        chart = undefined;
      }
      drawChart();
      if (ch.state?.threshold !== undefined && (ch.state.threshold !== m.threshold || ch.state.window !== m.window)) sendThreshold();
      const saved = ch.state?.overlay;
      if (saved) {
        overlaySelect.value = saved;
        ch.post({ type: 'overlay', column: saved });
      }
      break;
    }
    case 'spikes':
      spikes = m.spikes;
      thresholdField.value = String(m.threshold);
      windowField.value = String(m.window);
      renderSpikes();
      drawChart();
      document.body.dataset.ready = 'true';
      break;
    case 'overlay':
      overlay = m.column ? { label: m.label, updates: m.updates, values: m.values, sampled: m.sampled } : undefined;
      showNotice(undefined);
      if (chart) {
        chart.destroy();
        chart = undefined;
      }
      drawChart();
      break;
    case 'notice':
      showNotice(m.message, m.level);
      break;
  }
});
ch.ready();
