/**
 * Names of the index files trainers write to record their training order. They are `.npy` files
 * but hold sample/instance indices, not token ids, so workspace discovery must not offer them as
 * token datasets.
 * - Megatron-LM: `<hash>-GPTDataset-<split>-{document_index,sample_index,shuffle_index}.npy`
 *   (`megatron/core/datasets/gpt_dataset.py`, `_build_document_sample_shuffle_indices`).
 * - OLMo: `global_indices.npy` (`olmo/data/iterable_dataset.py`, OLMo-core `data_loader.py`).
 */
const ORDER_INDEX_FILE = /(?:-GPTDataset-[^/\\]+-(?:document_index|sample_index|shuffle_index)\.npy|(?:^|[/\\])global_indices\.npy)$/;

/** True when `file` (a name or path) is a training-order index file named as Megatron or OLMo name them. */
export function isTrainingOrderIndexFile(file: string): boolean {
  return ORDER_INDEX_FILE.test(file);
}
