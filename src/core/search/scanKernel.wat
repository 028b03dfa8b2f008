;; The per-token step of the search automaton, for every state (see scanKernel.ts for the
;; memory layout and automaton.ts for the table's entries). Compiled to WebAssembly at build
;; time by esbuild.js (wabt's wat2wasm, the npm package `wabt`).
;;
;; scan(ptr, i, to, rb, V, table, rn, cont, idsMode) walks the uint32 token ids at byte `ptr`
;; from index i while every token takes a fast table entry, and returns the index of the first
;; token that needs the JavaScript slow path (or `to`); the row base it stopped in is stored at
;; byte `table - 4` (read there by JavaScript through a typed array: cheaper than a global's
;; accessor at every exit).
;;   rb       base of the current state's table, in table entries (0 = state 0's dense row)
;;   V        ids < V have table entries
;;   table    byte offset of the table (int32 entries: >= 0 the next state's base, < 0 the slow path)
;;   rn       byte offset of state 0's two bits per id (16 ids a word, floor(V/16) + 1 words; id V's
;;            bits are never set): bit 0 the id leaves state 0 (its entry is not 0), bit 1 its entry
;;            is not a plain fast one (a match completes, or the next state has no table yet)
;;   cont     byte offset of a bit per id (floor(V/32) + 1 words): set when some built state's
;;            table holds the id (the id continues a match in progress differently from state 0);
;;            bit V set in text mode (an id past the vocabulary has no bytes: the state carries over)
;;   idsMode  1: an id >= V leads to state 0 (runs of token ids); 0: such an id goes to the slow path
;;   pair     1: state 0 tests every group of four tokens with the pair test (below); 0: only the
;;            groups where a token leaves state 0 (the kernel counts those at byte `table - 8`)
;;   cls      byte offset of a byte per id <= V (V: every id past the vocabulary): bits 0-1 the
;;            class of its first character, bits 2-3 of its last (0 not a word character, EOS
;;            too, 1 a word character, 2 the token alone does not settle it: no bytes, a
;;            character cut at its edge; terms.ts `edgeClasses`), bits 4-7 its length in
;;            bytes (15: 15 or more)
;;   cnt      byte offset of an i32 count per term, 0 = do not count: a counted entry (>= 2^30,
;;            the record at table entry x - 2^30: [next base, n, (term, flags) * n], flags bit 0:
;;            its start needs the class of the token before, bit 1: its end that of the token
;;            after, bits 2-: the match's bytes before the token (0: it starts in the token; else
;;            text mode: its first token and the class before it come from $before, and it
;;            must not lie before `lo`) then takes the slow path
;;   lim      ids[i + 1] can be read while i + 1 < lim (the chunk's length)
;;   rc       byte offset of a byte per id (floor(V/4) + 1 words; see $skipPair and automaton.ts
;;            `TokenTable.rc`): bit 0 its state-0 entry needs a step, bits 1-3 one-hot the class of
;;            the state it leads to, bit 4 its entry is a plain counted one (matches that all start
;;            in the token, at most the end's edge to check: $skipPair tallies them without a
;;            step when counting, by the class of the next token's first character),
;;            bits 5-7 the classes of the built states whose tables hold it
;;   lo       a counted match may start no earlier than token lo (the start of the count's range)
;;   any      byte offset of a bit per id (floor(V/32) + 1 words): its rn bits are not both 0 (half
;;            rn's size, so the branch mode's first test of four ids stays in the L1 cache)
;;   tallies  byte offset of two i32 tallies per id <= V: $skipPair, counting, adds one at 2 id + w
;;            for each plain counted token it passes (w: see word), and lists each slot 2 id + w
;;            whose tally leaves 0 downwards from it (the list's length at tallies - 4, its entries at tallies - 8, - 12, …); the
;;            caller turns the listed tallies into per-term counts through the tokens' records
;;            and zeroes them and the list
;;   word     1: a whole-word search: w = 1 when the first character of the token after is a word
;;            character (class 1; a match at the token's end is then not a whole word), and a
;;            class 2 there makes the token a stop (the table's step decides); 0: w = 0
;;
;; State 0 skips a token whose two bits are 0, and also one that only leaves state 0 (bits 01)
;; when the next token's `cont` bit is clear: from whatever state the first one leads to, the
;; next one takes state 0's entry, so the state after the pair does not depend on the first.
(module
  (import "env" "mem" (memory 1))
  ;; State 0's hottest loop, on its own (few live values: no spills): from index i, the first
  ;; group of four ids (i, i+4, … while i < to4) with an `any` bit set, or the first i >= to4.
  (func $skip0 (param $ptr i32) (param $i i32) (param $to4 i32) (param $V i32) (param $any i32) (result i32)
    (local $p i32) (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (block $out
      (loop $next
        (br_if $out (i32.ge_s (local.get $i) (local.get $to4)))
        (local.set $p (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $a (i32.load (local.get $p)))
        (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
        (local.set $b (i32.load offset=4 (local.get $p)))
        (local.set $b (select (local.get $b) (local.get $V) (i32.lt_u (local.get $b) (local.get $V))))
        (local.set $c (i32.load offset=8 (local.get $p)))
        (local.set $c (select (local.get $c) (local.get $V) (i32.lt_u (local.get $c) (local.get $V))))
        (local.set $d (i32.load offset=12 (local.get $p)))
        (local.set $d (select (local.get $d) (local.get $V) (i32.lt_u (local.get $d) (local.get $V))))
        (br_if $out
          (i32.and
            (i32.or
              (i32.or
                (i32.shr_u (i32.load (i32.add (local.get $any) (i32.shl (i32.shr_u (local.get $a) (i32.const 5)) (i32.const 2)))) (local.get $a))
                (i32.shr_u (i32.load (i32.add (local.get $any) (i32.shl (i32.shr_u (local.get $b) (i32.const 5)) (i32.const 2)))) (local.get $b)))
              (i32.or
                (i32.shr_u (i32.load (i32.add (local.get $any) (i32.shl (i32.shr_u (local.get $c) (i32.const 5)) (i32.const 2)))) (local.get $c))
                (i32.shr_u (i32.load (i32.add (local.get $any) (i32.shl (i32.shr_u (local.get $d) (i32.const 5)) (i32.const 2)))) (local.get $d))))
            (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $next)))
    (local.get $i))
  ;; State 0's pair test, on its own like $skip0 (few live values: no spills): from index i, over
  ;; groups of four ids (i, i+4, … while i < to4), the first token that needs a step (its `rc`
  ;; step bit, or the class of the state it leads to among the classes that hold the next token),
  ;; or the first group start i >= to4 (the caller tests the tail). The next group's first byte
  ;; is this group's fifth (read once). Adds the groups where a token leaves state 0 to $glv.
  ;; A group with a stop or a plain counted token (rc bit 4) takes one branch, off the hot path,
  ;; which tallies the plain counted tokens before its first stop (when counting, at $gtally; else
  ;; such a token is a stop), in a whole-word search under the class of the next token's first
  ;; character (at $gcls; a class 2 makes the token the stop).
  (global $glv (mut i32) (i32.const 0))
  ;; the scan's table and counts (byte offsets; $gcnt 0: not counting), for $skipPair
  (global $gtable (mut i32) (i32.const 0))
  (global $gcnt (mut i32) (i32.const 0))
  (global $gcls (mut i32) (i32.const 0))
  ;; two tallies per id (byte offset; see the header's `tallies`), and 1 in a whole-word search
  (global $gtally (mut i32) (i32.const 0))
  (global $gword (mut i32) (i32.const 0))
  (func $skipPair (param $ptr i32) (param $i i32) (param $to4 i32) (param $V i32) (param $rc i32) (result i32)
    (local $p i32) (local $a i32) (local $q0 i32) (local $q1 i32) (local $q2 i32) (local $q3 i32) (local $r i32) (local $lv i32)
    (local $k i32) (local $bits i32) (local $n i32)
    (block $end
      (block $hit
        (br_if $end (i32.ge_s (local.get $i) (local.get $to4)))
        (local.set $a (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
        (local.set $q0 (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
        (loop $next
          (local.set $p (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2))))
          (local.set $a (i32.load offset=4 (local.get $p)))
          (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
          (local.set $q1 (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
          (local.set $a (i32.load offset=8 (local.get $p)))
          (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
          (local.set $q2 (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
          (local.set $a (i32.load offset=12 (local.get $p)))
          (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
          (local.set $q3 (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
          (local.set $a (i32.load offset=16 (local.get $p)))
          (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
          (local.set $r (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
          (local.set $lv (i32.add (local.get $lv)
            (i32.ne (i32.and (i32.or (i32.or (local.get $q0) (local.get $q1)) (i32.or (local.get $q2) (local.get $q3))) (i32.const 0x1f)) (i32.const 0))))
          ;; per token t followed by n: rc[t] & ((rc[n] >> 4) | 0x11), its step bit, its class held
          ;; by n, or its plain counted bit
          (if (i32.or
                (i32.or (i32.and (local.get $q0) (i32.or (i32.shr_u (local.get $q1) (i32.const 4)) (i32.const 0x11))) (i32.and (local.get $q1) (i32.or (i32.shr_u (local.get $q2) (i32.const 4)) (i32.const 0x11))))
                (i32.or (i32.and (local.get $q2) (i32.or (i32.shr_u (local.get $q3) (i32.const 4)) (i32.const 0x11))) (i32.and (local.get $q3) (i32.or (i32.shr_u (local.get $r) (i32.const 4)) (i32.const 0x11)))))
            (then
              ;; (inline: a call in this loop would make V8 keep the loop's values on the stack)
              (local.set $n (select (i32.const 1) (i32.const 0x11) (global.get $gcnt)))
              (local.set $k
                (select (i32.const 0)
                  (select (i32.const 1)
                    (select (i32.const 2)
                      (select (i32.const 3) (i32.const 4) (i32.and (local.get $q3) (i32.or (i32.shr_u (local.get $r) (i32.const 4)) (local.get $n))))
                      (i32.and (local.get $q2) (i32.or (i32.shr_u (local.get $q3) (i32.const 4)) (local.get $n))))
                    (i32.and (local.get $q1) (i32.or (i32.shr_u (local.get $q2) (i32.const 4)) (local.get $n))))
                  (i32.and (local.get $q0) (i32.or (i32.shr_u (local.get $q1) (i32.const 4)) (local.get $n)))))
              ;; the plain counted tokens before k (not counting: each one is a stop, none lies before k)
              (local.set $bits
                (i32.and
                  (i32.or
                    (i32.or (i32.and (i32.shr_u (local.get $q0) (i32.const 4)) (i32.const 1)) (i32.and (i32.shr_u (local.get $q1) (i32.const 3)) (i32.const 2)))
                    (i32.or (i32.and (i32.shr_u (local.get $q2) (i32.const 2)) (i32.const 4)) (i32.and (i32.shr_u (local.get $q3) (i32.const 1)) (i32.const 8))))
                  (i32.sub (i32.shl (i32.const 1) (local.get $k)) (i32.const 1))))
              ;; one more tally for each (every match of its entry starts in it): at 2 id + w, w = 0, or in a
              ;; whole-word search the class of the next token's first character (a class 2 makes the
              ;; token the stop); a slot whose tally leaves 0 joins the list of the piece's tallies (its
              ;; length at $gtally - 4, slot after slot before it)
              (block $tallied
                (loop $each
                  (br_if $tallied (i32.eqz (local.get $bits)))
                  (local.set $p (i32.add (local.get $ptr) (i32.shl (i32.add (local.get $i) (i32.ctz (local.get $bits))) (i32.const 2))))
                  (local.set $n (i32.shl (i32.load (local.get $p)) (i32.const 1)))
                  (if (global.get $gword)
                    (then
                      ;; the token after it (j + 1 <= i + 4 < to: always read)
                      (local.set $a (i32.load offset=4 (local.get $p)))
                      (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
                      (local.set $a (i32.load8_u (i32.add (global.get $gcls) (local.get $a))))
                      (if (i32.and (local.get $a) (i32.const 2))
                        (then
                          (local.set $k (i32.ctz (local.get $bits)))
                          (br $tallied)))
                      (local.set $n (i32.or (local.get $n) (i32.and (local.get $a) (i32.const 1))))))
                  (local.set $a (i32.add (global.get $gtally) (i32.shl (local.get $n) (i32.const 2))))
                  (local.set $p (i32.load (local.get $a)))
                  (i32.store (local.get $a) (i32.add (local.get $p) (i32.const 1)))
                  (if (i32.eqz (local.get $p))
                    (then
                      (local.set $p (i32.load (i32.sub (global.get $gtally) (i32.const 4))))
                      (i32.store (i32.sub (global.get $gtally) (i32.shl (i32.add (local.get $p) (i32.const 2)) (i32.const 2))) (local.get $n))
                      (i32.store (i32.sub (global.get $gtally) (i32.const 4)) (i32.add (local.get $p) (i32.const 1)))))
                  (local.set $bits (i32.and (local.get $bits) (i32.sub (local.get $bits) (i32.const 1))))
                  (br $each)))
              (br_if $hit (i32.lt_u (local.get $k) (i32.const 4)))))
          (local.set $q0 (local.get $r))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br_if $next (i32.lt_s (local.get $i) (local.get $to4))))
        (br $end))
      (local.set $i (i32.add (local.get $i) (local.get $k))))
    (global.set $glv (i32.add (global.get $glv) (local.get $lv)))
    (local.get $i))
  ;; A match that ends in token i and starts bk > 0 bytes before it: its first token s, walking back
  ;; the tokens' lengths (class bits 4-7, 0 for ids >= V; 15 = 15 bytes or more), and the class of
  ;; the character before its first byte: of the last byte of token s - 1 when it starts at s's
  ;; first byte, of s's first byte when at its second; 2 (unknown) otherwise or at the chunk's
  ;; start; -1 when s lies before lo or a token is 15 bytes or longer (the slow path decides).
  (func $before (param $ptr i32) (param $s i32) (param $bk i32) (param $lo i32) (param $V i32) (param $cls i32) (result i32)
    (local $acc i32) (local $a i32) (local $e i32)
    (loop $walk
      (if (i32.le_s (local.get $s) (local.get $lo)) (then (return (i32.const -1))))
      (local.set $s (i32.sub (local.get $s) (i32.const 1)))
      (local.set $a (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $s) (i32.const 2)))))
      (local.set $e (i32.const 0))
      (if (i32.lt_u (local.get $a) (local.get $V))
        (then
          (local.set $e (i32.shr_u (i32.load8_u (i32.add (local.get $cls) (local.get $a))) (i32.const 4)))
          (if (i32.eq (local.get $e) (i32.const 15)) (then (return (i32.const -1))))))
      (local.set $acc (i32.add (local.get $acc) (local.get $e)))
      (br_if $walk (i32.lt_u (local.get $acc) (local.get $bk))))
    ;; the match starts at byte acc - bk of token s
    (local.set $e (i32.sub (local.get $acc) (local.get $bk)))
    (if (i32.eqz (local.get $e))
      (then
        (if (i32.eqz (local.get $s)) (then (return (i32.const 2))))
        (local.set $a (i32.load (i32.sub (i32.add (local.get $ptr) (i32.shl (local.get $s) (i32.const 2))) (i32.const 4))))
        (if (i32.ge_u (local.get $a) (local.get $V)) (then (return (i32.const 2))))
        (return (i32.and (i32.shr_u (i32.load8_u (i32.add (local.get $cls) (local.get $a))) (i32.const 2)) (i32.const 3)))))
    (if (i32.eq (local.get $e) (i32.const 1))
      (then (return (i32.and (i32.load8_u (i32.add (local.get $cls) (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $s) (i32.const 2)))))) (i32.const 3)))))
    (i32.const 2))
  (func (export "scan")
    (param $ptr i32) (param $i i32) (param $to i32) (param $rb i32)
    (param $V i32) (param $table i32) (param $rn i32) (param $cont i32) (param $idsMode i32) (param $pair i32)
    (param $cls i32) (param $cnt i32) (param $lim i32) (param $any i32) (param $rc i32) (param $lo i32)
    (param $tallies i32) (param $word i32)
    (result i32)
    (local $id i32) (local $x i32) (local $to4 i32) (local $p i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32) (local $e i32) (local $r i32)
    (local $q0 i32) (local $q1 i32) (local $q2 i32) (local $q3 i32) (local $lv i32)
    (local $n i32) (local $k i32) (local $f i32) (local $pc i32) (local $nc i32) (local $q i32)
    (local $s i32) (local $bk i32)
    ;; four tokens are tested at once while the one after them can be read too
    (local.set $to4 (i32.sub (local.get $to) (i32.const 4)))
    (global.set $glv (i32.const 0))
    (global.set $gtable (local.get $table))
    (global.set $gcnt (local.get $cnt))
    (global.set $gcls (local.get $cls))
    (global.set $gtally (local.get $tallies))
    (global.set $gword (local.get $word))
    (block $exit
      (loop $token
        (br_if $exit (i32.ge_u (local.get $i) (local.get $to)))
        (block $step
          (br_if $step (local.get $rb))
          ;; State 0: four ids per test while none of them needs a step (see the header).
          (block $four
            (loop $skip4
              ;; branch mode: past the groups where none of the four leaves state 0 (the common case)
              (if (i32.eqz (local.get $pair))
                (then (local.set $i (call $skip0 (local.get $ptr) (local.get $i) (local.get $to4) (local.get $V) (local.get $any))))
                (else
                  ;; pair mode: to the first token that needs a step (before to4), or the tail
                  (local.set $i (call $skipPair (local.get $ptr) (local.get $i) (local.get $to4) (local.get $V) (local.get $rc)))
                  (br_if $step (i32.lt_s (local.get $i) (local.get $to4)))))
              (br_if $four (i32.ge_s (local.get $i) (local.get $to4)))
              (local.set $p (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2))))
              ;; an id >= V is tested as V, whose bits are 0 in rn (and in cont in ids mode)
              (local.set $a (i32.load (local.get $p)))
              (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
              (local.set $b (i32.load offset=4 (local.get $p)))
              (local.set $b (select (local.get $b) (local.get $V) (i32.lt_u (local.get $b) (local.get $V))))
              (local.set $c (i32.load offset=8 (local.get $p)))
              (local.set $c (select (local.get $c) (local.get $V) (i32.lt_u (local.get $c) (local.get $V))))
              (local.set $d (i32.load offset=12 (local.get $p)))
              (local.set $d (select (local.get $d) (local.get $V) (i32.lt_u (local.get $d) (local.get $V))))
              (local.set $q0 (i32.load8_u (i32.add (local.get $rc) (local.get $a))))
              (local.set $q1 (i32.load8_u (i32.add (local.get $rc) (local.get $b))))
              (local.set $q2 (i32.load8_u (i32.add (local.get $rc) (local.get $c))))
              (local.set $q3 (i32.load8_u (i32.add (local.get $rc) (local.get $d))))
              ;; the common case: none of the four leaves state 0 (then nothing else is done: the
              ;; groups where one leaves are counted inside the branch, off the hot path)
              (local.set $x (i32.and (i32.or (i32.or (local.get $q0) (local.get $q1)) (i32.or (local.get $q2) (local.get $q3))) (i32.const 0x1f)))
              (if (i32.or (local.get $x) (local.get $pair))
                (then
                  (local.set $lv (i32.add (local.get $lv) (i32.ne (local.get $x) (i32.const 0))))
                  ;; else per token t followed by n: rc[t] & ((rc[n] >> 4) | 0x11) (see $skipPair;
                  ;; a plain counted token stops here: $skip1 hands it to the table's step)
                  (local.set $e (i32.load offset=16 (local.get $p)))
                  (local.set $e (select (local.get $e) (local.get $V) (i32.lt_u (local.get $e) (local.get $V))))
                  (local.set $r (i32.load8_u (i32.add (local.get $rc) (local.get $e))))
                  (br_if $four
                      (i32.or
                        (i32.or
                          (i32.and (local.get $q0) (i32.or (i32.shr_u (local.get $q1) (i32.const 4)) (i32.const 0x11)))
                          (i32.and (local.get $q1) (i32.or (i32.shr_u (local.get $q2) (i32.const 4)) (i32.const 0x11))))
                        (i32.or
                          (i32.and (local.get $q2) (i32.or (i32.shr_u (local.get $q3) (i32.const 4)) (i32.const 0x11)))
                          (i32.and (local.get $q3) (i32.or (i32.shr_u (local.get $r) (i32.const 4)) (i32.const 0x11)))))
                      )))
              (local.set $i (i32.add (local.get $i) (i32.const 4)))
              (br $skip4)))
          ;; one id at a time up to the one that needs a step
          (loop $skip1
            (br_if $exit (i32.ge_u (local.get $i) (local.get $to)))
            (local.set $a (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
            (local.set $a (select (local.get $a) (local.get $V) (i32.lt_u (local.get $a) (local.get $V))))
            (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $to))
              (then
                (local.set $b (i32.load offset=4 (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
                (local.set $b (select (local.get $b) (local.get $V) (i32.lt_u (local.get $b) (local.get $V))))
                (br_if $step (i32.and (i32.or (i32.shr_u (local.tee $r (i32.shr_u (i32.load (i32.add (local.get $rn) (i32.shl (i32.shr_u (local.get $a) (i32.const 4)) (i32.const 2)))) (i32.shl (local.get $a) (i32.const 1)))) (i32.const 1)) (i32.and (local.get $r) (i32.shr_u (i32.load (i32.add (local.get $cont) (i32.shl (i32.shr_u (local.get $b) (i32.const 5)) (i32.const 2)))) (local.get $b)))) (i32.const 1))))
              (else
                ;; the last token of the range has no next one to look at: any bit, and it takes its step
                (br_if $step
                  (i32.and
                    (i32.shr_u
                      (i32.load (i32.add (local.get $rn) (i32.shl (i32.shr_u (local.get $a) (i32.const 4)) (i32.const 2))))
                      (i32.shl (local.get $a) (i32.const 1)))
                    (i32.const 3)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $skip1)))
        ;; Any state: one table lookup.
        (local.set $id (i32.load (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
        (if (i32.ge_u (local.get $id) (local.get $V))
          (then
            (br_if $exit (i32.eqz (local.get $idsMode)))
            (local.set $rb (i32.const 0))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $token)))
        (if (i32.eqz (local.get $rb))
          (then
            ;; state 0: its dense row
            (local.set $x (i32.load (i32.add (local.get $table) (i32.shl (local.get $id) (i32.const 2))))))
          (else
            ;; another state: its exception table at rb = [mask, state, (id, entry) * (mask + 1)],
            ;; open addressing from slot ((id * 0x9e3779b1) >>> 12) & mask; an empty slot (-1)
            ;; means the id's entry is state 0's
            (local.set $p (i32.add (local.get $table) (i32.shl (local.get $rb) (i32.const 2))))
            (local.set $a (i32.load (local.get $p)))
            (local.set $b
              (i32.and (i32.shr_u (i32.mul (local.get $id) (i32.const 0x9e3779b1)) (i32.const 12)) (local.get $a)))
            (block $found
              ;; an id in no built state's table (cont bit clear) takes state 0's entry: no probe
              (if (i32.eqz (i32.and
                    (i32.shr_u (i32.load (i32.add (local.get $cont) (i32.shl (i32.shr_u (local.get $id) (i32.const 5)) (i32.const 2)))) (local.get $id))
                    (i32.const 1)))
                (then
                  (local.set $x (i32.load (i32.add (local.get $table) (i32.shl (local.get $id) (i32.const 2)))))
                  (br $found)))
              (loop $probe
                (local.set $c (i32.add (local.get $p) (i32.shl (local.get $b) (i32.const 3))))
                (local.set $d (i32.load offset=8 (local.get $c)))
                (if (i32.eq (local.get $d) (local.get $id))
                  (then
                    (local.set $x (i32.load offset=12 (local.get $c)))
                    (br $found)))
                (if (i32.eq (local.get $d) (i32.const -1))
                  (then
                    (local.set $x (i32.load (i32.add (local.get $table) (i32.shl (local.get $id) (i32.const 2)))))
                    (br $found)))
                (local.set $b (i32.and (i32.add (local.get $b) (i32.const 1)) (local.get $a)))
                (br $probe)))))
        (br_if $exit (i32.lt_s (local.get $x) (i32.const 0)))
        (if (i32.ge_u (local.get $x) (i32.const 0x40000000))
          (then
            ;; A counted entry: the token completes matches that start in it.
            (br_if $exit (i32.eqz (local.get $cnt)))
            (local.set $p (i32.add (local.get $table) (i32.shl (i32.sub (local.get $x) (i32.const 0x40000000)) (i32.const 2))))
            (local.set $n (i32.load offset=4 (local.get $p)))
            ;; the class of the last byte of the token before, and of the first byte of the one after
            (local.set $pc (i32.const 2))
            (if (local.get $i)
              (then
                (local.set $a (i32.load (i32.sub (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2))) (i32.const 4))))
                (if (i32.lt_u (local.get $a) (local.get $V))
                  (then (local.set $pc (i32.and (i32.shr_u (i32.load8_u (i32.add (local.get $cls) (local.get $a))) (i32.const 2)) (i32.const 3)))))))
            (local.set $nc (i32.const 2))
            (if (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $lim))
              (then
                (local.set $a (i32.load offset=4 (i32.add (local.get $ptr) (i32.shl (local.get $i) (i32.const 2)))))
                (if (i32.lt_u (local.get $a) (local.get $V))
                  (then (local.set $nc (i32.and (i32.load8_u (i32.add (local.get $cls) (local.get $a))) (i32.const 3)))))))
            ;; an edge the classes cannot settle (2): all of the token's matches take the slow path
            (local.set $k (i32.const 0))
            (block $checked
              (loop $check
                (br_if $checked (i32.ge_u (local.get $k) (local.get $n)))
                (local.set $f (i32.load offset=12 (i32.add (local.get $p) (i32.shl (local.get $k) (i32.const 3)))))
                ;; a match that starts `back` bytes before the token (flags >> 2, text mode): its first
                ;; token must lie in this count's range, and the character before it is $before's
                (local.set $bk (i32.shr_u (local.get $f) (i32.const 2)))
                (if (local.get $bk)
                  (then
                    (local.set $s (call $before (local.get $ptr) (local.get $i) (local.get $bk) (local.get $lo) (local.get $V) (local.get $cls)))
                    (br_if $exit (i32.lt_s (local.get $s) (i32.const 0)))
                    (br_if $exit (i32.and (i32.and (local.get $f) (i32.const 1)) (i32.eq (local.get $s) (i32.const 2)))))
                  (else
                    (br_if $exit (i32.and (i32.and (local.get $f) (i32.const 1)) (i32.eq (local.get $pc) (i32.const 2))))))
                (br_if $exit (i32.and (i32.shr_u (local.get $f) (i32.const 1)) (i32.eq (local.get $nc) (i32.const 2))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $check)))
            ;; count each match whose edges hold (class 1, a word character: not a whole word)
            (local.set $k (i32.const 0))
            (block $counted
              (loop $count
                (br_if $counted (i32.ge_u (local.get $k) (local.get $n)))
                (local.set $q (i32.add (local.get $p) (i32.shl (local.get $k) (i32.const 3))))
                (local.set $f (i32.load offset=12 (local.get $q)))
                (local.set $s (local.get $pc))
                (if (i32.shr_u (local.get $f) (i32.const 2))
                  (then (local.set $s (call $before (local.get $ptr) (local.get $i) (i32.shr_u (local.get $f) (i32.const 2)) (local.get $lo) (local.get $V) (local.get $cls)))))
                (if (i32.eqz
                      (i32.or
                        (i32.and (i32.and (local.get $f) (i32.const 1)) (i32.eq (local.get $s) (i32.const 1)))
                        (i32.and (i32.shr_u (local.get $f) (i32.const 1)) (i32.eq (local.get $nc) (i32.const 1)))))
                  (then
                    (local.set $a (i32.add (local.get $cnt) (i32.shl (i32.load offset=8 (local.get $q)) (i32.const 2))))
                    (i32.store (local.get $a) (i32.add (i32.load (local.get $a)) (i32.const 1)))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $count)))
            (local.set $rb (i32.load (local.get $p)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $token)))
        (local.set $rb (local.get $x))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $token)))
    (i32.store (i32.sub (local.get $table) (i32.const 4)) (local.get $rb))
    (i32.store (i32.sub (local.get $table) (i32.const 8)) (i32.add (local.get $lv) (global.get $glv)))
    (local.get $i)))
