/** CLI front of shard hash verification (`token-shards verify`). */
import { DataError } from './core/errors';

/** Options of `token-shards verify`. */
export interface VerifyCommandOptions { jobs?: number; json: boolean; noCache: boolean }

/** Runs `token-shards verify <root>`; returns the exit code (0 all ok, 1 faults, 2 usage). */
export async function runVerifyCommand(root: string, _opts: VerifyCommandOptions): Promise<number> {
  throw new DataError(`${root}: verify is being implemented`);
}
