"""llm.c's random numbers, ported to Python from its C source, as an independent reference for the
tests: `llmc/rand.h` (karpathy/llm.c commit f1e2ace651495b74ae22d45d1723443fd00ecd3a) lines
106-116 `manual_seed`, 118-132 `next_state`, 134-146 `randint32`, 223-238 `random_permutation`.
Written from the C, line by line, in plain Python integers (no numpy RNG, so it cannot share a
mistake with the product's MT19937 port).
"""

N, M = 624, 397
LMASK, UMASK = 0x7FFFFFFF, 0x80000000
MATRIX_A = (0x0, 0x9908B0DF)


class LlmcRng:
    def __init__(self, seed):
        self.state = [0] * N
        self.state[0] = seed & 0xFFFFFFFF
        for j in range(1, N):
            prev = self.state[j - 1]
            self.state[j] = (1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF
        self.left = 1
        self.next = 0

    def _next_state(self):
        st = self.state
        self.left = N
        self.next = 0
        j = 0
        while j < N - M:
            y = (st[j] & UMASK) | (st[j + 1] & LMASK)
            st[j] = st[j + M] ^ (y >> 1) ^ MATRIX_A[y & 1]
            j += 1
        while j < N - 1:
            y = (st[j] & UMASK) | (st[j + 1] & LMASK)
            st[j] = st[j + (M - N)] ^ (y >> 1) ^ MATRIX_A[y & 1]
            j += 1
        y = (st[N - 1] & UMASK) | (st[0] & LMASK)
        st[N - 1] = st[M - 1] ^ (y >> 1) ^ MATRIX_A[y & 1]

    def randint32(self):
        self.left -= 1
        if self.left <= 0:
            self._next_state()
        y = self.state[self.next]
        self.next += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y & 0xFFFFFFFF


def random_permutation(data, rng):
    """In place, as llm.c's random_permutation: j = randint32 % (i + 1) for i = n-1 .. 1."""
    for i in range(len(data) - 1, 0, -1):
        j = rng.randint32() % (i + 1)
        data[i], data[j] = data[j], data[i]
