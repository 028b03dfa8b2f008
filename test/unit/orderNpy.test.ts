/**
 * The `.npy` reader of the order's index files against files numpy writes (int32, uint32, int64,
 * 2-D, format version 2.0), and its one-line faults naming the file and byte: no magic, an
 * unknown version, a dtype that is no index, Fortran order, a file shorter than its shape.
 */
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DataError } from '../../src/core/errors';
import { npyBytes, openNpy } from '../../src/core/order/vector';

describe('training order: .npy index files', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsi-npy-'));
    execFileSync(
      'python3',
      [
        '-c',
        `import sys, numpy as np
from numpy.lib import format as f
d = sys.argv[1]
r = np.random.RandomState(5)
np.save(d + "/i4.npy", r.randint(-2**31, 2**31 - 1, 70000).astype(np.int32))
np.save(d + "/u4.npy", r.randint(0, 2**32 - 1, 70000, dtype=np.uint64).astype(np.uint32))
np.save(d + "/i8.npy", r.randint(-2**52, 2**52, (5001, 2), dtype=np.int64))
with open(d + "/v2.npy", "wb") as w: f.write_array(w, np.arange(10, dtype=np.uint32), version=(2, 0))
np.save(d + "/f2.npy", np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)))
np.save(d + "/u2.npy", np.arange(4, dtype=np.uint16))
for n in ["i4", "u4", "i8", "v2"]: np.load(d + "/" + n + ".npy").astype("<f8").tofile(d + "/" + n + ".f8")`,
        dir,
      ],
      { stdio: 'inherit' },
    );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads every element numpy wrote, 1-D and 2-D, format 1.0 and 2.0; writes what numpy reads back', () => {
    for (const [name, shape] of [
      ['i4', [70000]],
      ['u4', [70000]],
      ['i8', [5001, 2]],
      ['v2', [10]],
    ] as const) {
      const raw = fs.readFileSync(path.join(dir, `${name}.f8`));
      const want = new Float64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
      const { vector, shape: got } = openNpy(path.join(dir, `${name}.npy`));
      assert.deepStrictEqual(got, [...shape]);
      assert.deepStrictEqual(Array.from(vector.readRange(0, vector.length)), Array.from(want), name);
      for (const i of [0, 1, 16383, 16384, vector.length - 1])
        if (i < vector.length) assert.strictEqual(vector.get(i), want[i], `${name}[${i}]`);
      vector.close();
    }
    const mine = path.join(dir, 'mine.npy');
    fs.writeFileSync(mine, npyBytes(Int32Array.from([3, -1, 7, 9, 2, 0]), 'i4', [3, 2]));
    assert.strictEqual(
      execFileSync('python3', ['-c', 'import sys, numpy as np; a = np.load(sys.argv[1]); print(a.dtype, a.shape, a.tolist())', mine], {
        encoding: 'utf8',
      }).trim(),
      'int32 (3, 2) [[3, -1], [7, 9], [2, 0]]',
    );
  });

  it('faults are one line naming the file and the byte', () => {
    const fault = (name: string, bytes?: Buffer): string => {
      const f = path.join(dir, name);
      if (bytes) fs.writeFileSync(f, bytes);
      try {
        openNpy(f).vector.close();
      } catch (err) {
        assert.ok(err instanceof DataError);
        assert.ok(!err.message.includes('\n'));
        return err.message;
      }
      assert.fail(`${name} accepted`);
    };
    const good = fs.readFileSync(path.join(dir, 'u4.npy'));
    assert.match(fault('nomagic.npy', Buffer.from('not an npy file at all')), /nomagic\.npy: byte 0: expected the \.npy magic/);
    const v9 = Buffer.from(good);
    v9[6] = 9;
    assert.match(fault('v9.npy', v9), /v9\.npy: byte 6: \.npy format version 9 is unknown/);
    assert.match(fault('u2.npy'), /u2\.npy: byte 10: \.npy dtype '<u2' is not an index dtype/);
    assert.match(fault('f2.npy'), /f2\.npy: byte 10: the array is in Fortran order/);
    assert.match(
      fault('short.npy', good.subarray(0, good.length - 4)),
      new RegExp(
        `short\\.npy: byte ${(good.length - 4).toLocaleString('en-US')}: the file ends before the data its \\.npy header promises \\(expected ${good.length.toLocaleString('en-US')} bytes\\)`,
      ),
    );
  });
});
