/**
 * The Python prelude that imports the dataset card's reference reader (scripts/reference_reader.py)
 * as `tokens(root, start, n)`, for scripts that run python3 with their own code after it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the folder holding reference_reader.py. */
export const REFERENCE_READER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Python source lines that make `tokens`, `json`, `sys`, `time` and `np` available. */
export const PY_READER_PRELUDE = `import json, sys, time\nimport numpy as np\nsys.path.insert(0, ${JSON.stringify(REFERENCE_READER_DIR)})\nfrom reference_reader import tokens\n`;
