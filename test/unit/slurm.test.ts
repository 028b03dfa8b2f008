/**
 * The README's cluster recipes, run literally on a one-node Slurm cluster (munged, slurmctld and
 * slurmd on this host, started by scripts/slurm-cluster.sh from test/slurm/slurm.conf): the fenced
 * blocks after `<!-- cluster-recipe: NAME -->` in README.md are written out and run by bash as they
 * stand, with only the values of the variables they declare (ROOT, TERMS, UPDATES) replaced. The
 * merged result of the 4-task job array equals one machine's output: `count` byte for byte (terms
 * on the command line; a terms file made from the sample's text with `--share`), `stats` byte for
 * byte, and the findings of `verify --json` on a copy of the sample with one shard damaged and one
 * missing.
 *
 * Without Slurm (exit 3 of the script) or not as root (exit 4) the suite is skipped with the
 * reason, except on CI (`CI` set), where `.ci/run` installs and starts the cluster and a missing
 * one fails; a cluster that does not start (exit 1) fails everywhere.
 */
import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openDataset } from '../../src/core/dataset';
import { cliPath, repoRoot, runCli, sampleDir } from './fixtures';
import { python3Cached } from './pyref';

/** The blocks of README.md marked `<!-- cluster-recipe: NAME -->`, by name. */
function readmeRecipes(): Map<string, string> {
  const text = fs.readFileSync(path.join(repoRoot(), 'README.md'), 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<!-- cluster-recipe: ([\w.-]+) -->\n```bash\n([\s\S]*?)```/g)) out.set(m[1], m[2]);
  return out;
}

/** `block` with the value of the variable `name` (its one `NAME=…` line) replaced by `value`. */
function setVariable(block: string, name: string, value: string): string {
  const re = new RegExp(`^${name}=.*$`, 'gm');
  assert.strictEqual(block.match(re)?.length, 1, `the recipe declares ${name} once`);
  return block.replace(re, `${name}=${value}`);
}

/** A bash word holding `s` exactly. */
function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the README cluster recipes on a one-node Slurm cluster', function () {
  this.timeout(0);
  let env: NodeJS.ProcessEnv;
  let tmp: string;
  let recipes: Map<string, string>;

  before(function () {
    const r = spawnSync('bash', [path.join(repoRoot(), 'scripts', 'slurm-cluster.sh')], { encoding: 'utf8' });
    if (r.status !== 0) {
      const why = `no Slurm cluster: scripts/slurm-cluster.sh exited ${r.status}: ${r.stderr.trim().split('\n').pop()}`;
      // On CI the cluster is part of the set-up (.ci/run): its absence is a failure, never a skip.
      if (process.env.CI || (r.status !== 3 && r.status !== 4)) throw new Error(why);
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-slurm-'));
    // `token-shards` on PATH for the jobs, as an installed package puts it there.
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'token-shards'), `#!/bin/sh\nexec ${shellWord(process.execPath)} ${shellWord(cliPath())} "$@"\n`, {
      mode: 0o755,
    });
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}:/usr/sbin`,
      SLURM_CONF: r.stdout.trim().split('\n').pop(),
      // The jobs' verify cache and stream index stay in this test's folder.
      XDG_CACHE_HOME: path.join(tmp, 'cache'),
    };
    recipes = readmeRecipes();
    for (const name of ['part.sbatch', 'count', 'verify', 'stats']) assert.ok(recipes.has(name), `README.md has the recipe ${name}`);
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Runs the README's `name` block (its variables set as given) in a fresh folder next to
   * part.sbatch (its ROOT set to `root`), waits for the merge job and returns the folder, the
   * merge job's final state and its output file's text.
   */
  async function runRecipe(
    label: string,
    name: string,
    root: string,
    vars: Record<string, string>,
  ): Promise<{ dir: string; state: string; exitCode: string; out: string }> {
    const dir = path.join(tmp, label);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'part.sbatch'), setVariable(recipes.get('part.sbatch')!, 'ROOT', shellWord(root)));
    let block = recipes.get(name)!;
    for (const [k, v] of Object.entries(vars)) block = setVariable(block, k, v);
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block], { cwd: dir, env, encoding: 'utf8' });
    assert.strictEqual(r.status, 0, `the ${name} recipe: ${r.stderr}`);
    const job = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
    assert.ok(job, `the recipe printed the merge job's id: ${r.stdout}`);
    const logs = () =>
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.out'))
        .map((f) => `${f}: ${fs.readFileSync(path.join(dir, f), 'utf8')}`)
        .join('\n');
    for (;;) {
      const info = execFileSync('scontrol', ['show', 'job', '-o', job], { env, encoding: 'utf8' });
      const state = /JobState=(\S+)/.exec(info)?.[1] ?? '';
      const reason = /Reason=(\S+)/.exec(info)?.[1] ?? '';
      if (reason === 'DependencyNeverSatisfied') assert.fail(`the merge job ${job} never ran: a task of the array failed. ${logs()}`);
      if (!['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING'].includes(state)) {
        const exitCode = /ExitCode=(\d+):/.exec(info)?.[1] ?? '';
        const out = /'token-shards merge .* > (\S+)'/.exec(block)?.[1];
        return { dir, state, exitCode, out: fs.readFileSync(path.join(dir, out!), 'utf8') };
      }
      await sleep(500);
    }
  }

  /** One machine's output of the CLI with `args` (which must succeed). */
  function single(args: string[]): string {
    const r = runCli(args);
    assert.strictEqual(r.code, 0, r.stderr);
    return r.stdout;
  }

  it('count: terms on the command line, merged = one machine, byte for byte', async () => {
    const root = sampleDir();
    const n = (await openDataset(root)).shards.length;
    const terms = ['whale', 'Ahab', 'the sea', '--word'];
    const run = await runRecipe('count-terms', 'count', root, { TERMS: `(${terms.map(shellWord).join(' ')})` });
    assert.strictEqual(run.state, 'COMPLETED', run.out);
    assert.strictEqual(fs.readdirSync(path.join(run.dir, 'parts')).length, 4, 'four parts');
    assert.strictEqual(run.out, single(['count', root, ...terms, '--shards', `0:${n}`, '--json']));
    const merged = JSON.parse(run.out) as Record<string, unknown>;
    delete merged.shards;
    delete merged.dataset;
    assert.strictEqual(JSON.stringify(merged) + '\n', single(['count', root, ...terms, '--json']));
  });

  it("count: --terms-file (the sample's 30 most frequent capitalised words) with --share, byte for byte", async () => {
    const root = sampleDir();
    const ds = await openDataset(root);
    const names = JSON.parse(
      python3Cached(
        [path.join(repoRoot(), 'scripts', 'reference_search.py'), root, '--mode', 'names', '--top', '30', '--G', String(ds.schedule.G)],
        [root],
      ),
    ) as string[];
    const file = path.join(tmp, 'names.txt');
    fs.writeFileSync(file, `# names from the sample's text\n${names.join('\n')}\n`);
    const flags = ['--terms-file', file, '--word', '--ignore-case', '--share'];
    const run = await runRecipe('count-file', 'count', root, { TERMS: `(${flags.map(shellWord).join(' ')})` });
    assert.strictEqual(run.state, 'COMPLETED', run.out);
    const whole = single(['count', root, ...flags, '--json']);
    assert.ok((JSON.parse(whole) as { buckets: { shares: unknown[] }[] }).buckets[0].shares.length === names.length, 'shares per term');
    assert.strictEqual(run.out, single(['count', root, ...flags, '--shards', `0:${ds.shards.length}`, '--json']));
    const merged = JSON.parse(run.out) as Record<string, unknown>;
    delete merged.shards;
    delete merged.dataset;
    assert.strictEqual(JSON.stringify(merged) + '\n', whole);
  });

  it('stats of an update range: merged records = one machine, byte for byte', async () => {
    const root = sampleDir();
    const ds = await openDataset(root);
    const range = `2..${ds.schedule.numUpdates - 3}`;
    const run = await runRecipe('stats', 'stats', root, { UPDATES: range });
    assert.strictEqual(run.state, 'COMPLETED', run.out);
    assert.strictEqual(run.out, single(['stats', root, range, '--json']));
  });

  it('verify of a copy with one shard damaged and one missing: the merged summary has the findings of verify --json', async () => {
    const root = path.join(tmp, 'damaged');
    fs.cpSync(sampleDir(), root, { recursive: true, dereference: true });
    const ds = await openDataset(root);
    const damaged = ds.shards[3].path,
      missing = ds.shards[8].path;
    const fd = fs.openSync(damaged, 'r+');
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, 1000);
    b[0] ^= 0xff;
    fs.writeSync(fd, b, 0, 1, 1000);
    fs.closeSync(fd);
    fs.rmSync(missing);
    const run = await runRecipe('verify', 'verify', root, {});
    // merge exits 1 when a shard is not ok, as verify does.
    assert.strictEqual(run.state, 'FAILED');
    assert.strictEqual(run.exitCode, '1');
    const merged = JSON.parse(run.out) as Record<string, unknown> & { not_ok: Record<string, unknown>[] };
    const r = spawnSync(process.execPath, [cliPath(), 'verify', root, '--json', '--no-cache'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1, r.stderr);
    const one = JSON.parse(r.stdout) as Record<string, unknown> & { results: Record<string, unknown>[] };
    assert.strictEqual(merged.all_ok, false);
    assert.strictEqual(merged.shards, one.shards);
    assert.deepStrictEqual(merged.counts, one.counts);
    assert.deepStrictEqual(merged.manifest_problems, one.manifest_problems);
    const notOk = one.results
      .filter((x) => x.status !== 'ok')
      .map(({ from_cache, checked_at, ...rest }) => (void from_cache, void checked_at, rest));
    assert.deepStrictEqual(merged.not_ok, notOk);
    assert.deepStrictEqual(
      merged.not_ok.map((x) => [x.shard, x.status]),
      [
        [ds.shards[3].shard, 'mismatch'],
        [ds.shards[8].shard, 'missing'],
      ],
    );
  });
});
