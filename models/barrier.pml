/* The cross-rank barrier (include/tilecast/device/comm/) as a Promela model for spin.
 *
 * R ranks, each with C CTAs, play ROUNDS full barriers:
 *     every CTA writes a round-stamped payload into every rank,
 *     grid sync (bit-flip counter)  ->  CTA 0: cross-rank step  ->  grid sync,
 *     every CTA checks the payload it received.
 * The cross-rank step is FORM 0 (phase/sign counter) or FORM 1 (epoch inbox).
 * spin explores every interleaving of these steps, under sequential consistency: the memory
 * orders are the CPU model's and the GPU tests' business (tests/cpu/comm, tests/gpu/comm); this
 * checks the protocol's logic:
 *   - no deadlock: a state where ranks still wait and none can move is an invalid end state;
 *   - no rank (no CTA) leaves a round before every rank has arrived at it (assert);
 *   - slot reuse is safe: each add finds its slot in the range its round expects (assert), and
 *     the payload each CTA reads after the barrier is this round's (assert);
 *   - counters wrap: the phase/sign counter is kept mod 8 (its low 2 bits are all the protocol
 *     reads, and 2^32 is a multiple of 8), the epoch mod EMOD with the wrap-safe comparison,
 *     starting at E0 so that it wraps during the run, the grid counter mod 2^GBITS with its
 *     flip bit on top.
 * BUG selects a deliberately broken variant, which the ctest expects spin to reject:
 *   1  sign read from bit 2 instead of bit 1          (phase/sign)
 *   2  one slot instead of two alternating ones        (phase/sign)
 *   3  epoch compared with == instead of "or later"    (epoch)
 *   4  no grid sync after the cross-rank step          (C > 1)
 */
#ifndef R
#define R 2
#endif
#ifndef C
#define C 1
#endif
#ifndef ROUNDS
#define ROUNDS 5
#endif
#ifndef FORM
#define FORM 0
#endif
#ifndef BUG
#define BUG 0
#endif
#ifndef C0
#define C0 0          /* first phase/sign counter, mod 8 */
#endif
#ifndef EMOD
#define EMOD 8        /* epoch modulus in the model; the device's is 2^32 */
#endif
#ifndef E0
#define E0 6          /* first epoch: wraps after two rounds */
#endif
#define GBITS 4       /* grid counter mod 16, flip bit 8: enough for C <= 7 */
#define GMOD 16
#define GFLIP 8

short sig[2 * R];            /* phase/sign slots, [rank][slot] */
byte inbox[R * R];           /* epoch slots, [rank][src] */
byte payload[R * 2 * R * C]; /* [dst][parity][src][cta] = round + 1 */
byte arrived[R];             /* ghost: rounds each rank's CTA 0 has arrived at */
byte gcount[R];              /* grid counters */

#if BUG == 1
#define SIGN(c) (((c) >> 2) & 1)
#else
#define SIGN(c) (((c) >> 1) & 1)
#endif
#if BUG == 2
#define PHASE(c) 0
#else
#define PHASE(c) ((c) & 1)
#endif

#define REACHED(seen, want) ((((seen) + EMOD - (want)) % EMOD) < EMOD / 2)

/* Grid sync of rank r's C CTAs; `before` is a local of the caller. */
inline grid_sync(r, cta, before) {
  d_step {
    before = gcount[r];
    gcount[r] = (gcount[r] + (cta == 0 -> (GFLIP - (C - 1)) : 1)) % GMOD
  };
  ((gcount[r] & GFLIP) != (before & GFLIP));
  before = 0
}

proctype Cta(byte me; byte cta) {
  byte round = 0;
  byte peer;
  byte c = C0;          /* phase/sign counter, only CTA 0's is used */
  byte e = E0;          /* epoch, only CTA 0's is used */
  byte before;
  short old;
  do
  :: round < ROUNDS ->
     /* One step for all the payload stores: their order among themselves cannot matter here
      * (no one reads them before the barrier), and interleaving them would only multiply states. */
     d_step {
       for (peer : 0 .. R - 1) {
         payload[((peer * 2 + round % 2) * R + me) * C + cta] = round + 1
       };
       peer = 0
     };
     if
     :: C > 1 -> grid_sync(me, cta, before)
     :: else -> skip
     fi;
     if
     :: cta == 0 ->
        arrived[me] = round + 1;
#if FORM == 0
        for (peer : 0 .. R - 1) {
          d_step {
            old = sig[peer * 2 + PHASE(c)];
            /* slot reuse: a +1 round finds 0..R-1, a -1 round finds 1..R */
            assert(SIGN(c) == 0 -> (old >= 0 && old < R) : (old > 0 && old <= R));
            sig[peer * 2 + PHASE(c)] = old + (SIGN(c) == 0 -> 1 : -1);
            old = 0
          }
        };
        (sig[me * 2 + PHASE(c)] == (SIGN(c) == 0 -> R : 0));
        c = (c + 1) % 8;
#else
        e = (e + 1) % EMOD;
        for (peer : 0 .. R - 1) {
          if
          :: peer != me -> inbox[peer * R + me] = e
          :: else -> skip
          fi
        };
        for (peer : 0 .. R - 1) {
#if BUG == 3
          (peer == me || inbox[me * R + peer] == e)
#else
          (peer == me || REACHED(inbox[me * R + peer], e))
#endif
        };
#endif
        skip;  /* a loop may not jump straight into a d_step */
        /* no rank leaves before every rank arrived */
        d_step {
          for (peer : 0 .. R - 1) { assert(arrived[peer] >= round + 1) };
          peer = 0
        }
     :: else -> skip
     fi;
#if BUG != 4
     if
     :: C > 1 -> grid_sync(me, cta, before)
     :: else -> skip
     fi;
#endif
     /* data before signal: every CTA of every rank wrote this round's stamp */
     d_step {
       for (peer : 0 .. R * C - 1) {
         assert(payload[((me * 2 + round % 2) * R + peer / C) * C + peer % C] == round + 1)
       };
       peer = 0;
       round++
     }
  :: else -> break
  od
}

init {
  byte r, k;
  for (r : 0 .. R - 1) {
    /* initial slots as barrier_initial_block writes them for counter C0 */
    sig[r * 2 + PHASE(C0)] = (SIGN(C0) == 1 -> R : 0);
    sig[r * 2 + PHASE(C0 + 1)] = (SIGN(C0 + 1) == 1 -> R : 0);
    for (k : 0 .. R - 1) { inbox[r * R + k] = E0 }
  }
  atomic {
    for (r : 0 .. R - 1) {
      for (k : 0 .. C - 1) { run Cta(r, k) }
    }
  }
}
