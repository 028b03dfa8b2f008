/**
 * The core's public surface, bundled as `dist/core.js` for scripts (benchmarks, sample tools).
 * No `vscode` import anywhere under `src/core/`.
 */
export * from './errors';
export * from './manifest';
export * from './stream';
export * from './schedule';
export * from './tokenizer';
export * from './dataset';
export * from './documents';
export * from './update';
export * from './numbers';
export * from './navigation';
export * from './updateModel';
export * from './idList';
export * from './pages';
export * from './verify/verify';
export * from './verify/cache';
export * from './invisibles';
export * from './verify/format';
export * from './streamIndex/entryStore';
export * from './streamIndex/queries';
export * from './streamIndex/anomalies';
export * from './streamIndex/streamIndex';
export * from './streamIndex/kernel';
export * from './streamIndex/scan';
export * from './stats';
export * from './export';
export * from './trainingLog/parse';
export * from './trainingLog/spikes';
export * from './fileIdentity';
export * from './search';
export * from './streamIndex/indexShards';
export * from './shardPool';
export * from './order/order';
export * from './order/vector';
export * from './order/rng';
export * from './order/sequential';
export * from './order/megatron';
export * from './order/olmo';
export * from './order/llmc';
export * from './order/runFile';
export * from './order/openOrder';
