//! Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash
//! Algorithm", Google, 2014, arXiv:1406.2294).
//!
//! **Algorithm.** Follow the key through a sequence of bucket counts: a pseudo-random
//! generator seeded by the key decides, for each "jump", the next bucket count at which
//! the key would move; the last jump below `n` is its bucket. Each step is a 64-bit LCG
//! step and one floating-point division (IEEE-exact, so identical on every platform).
//!
//! **Guarantees.** Balanced to within sampling noise; growing from `n` to `n + 1` buckets
//! moves exactly the keys that land in the new bucket `n` (about `1/(n+1)` of them) and
//! never moves a key between old buckets. Buckets are numbered, not named: only the
//! last bucket can be removed without reshuffling, so removing a node from the middle
//! of the list moves that node's keys *and* renumbers the tail.
//!
//! **Cost.** `O(ln n)` expected steps per key (about `ln n + 0.6`), no memory.
//!
//! **Batches.** One key's steps form a dependency chain (LCG step, conversion, an
//! `f64` division, a multiplication, a truncation, a compare) ending in a loop exit the
//! processor cannot predict, so a loop over keys runs at the chain's latency, not at
//! the processor's throughput: about 12 ns a key at 10 buckets and 50 ns at 1,000. But
//! the keys of a batch are independent. On x86-64, [`jump_many`] and the router's
//! batch functions keep 64 keys in flight: a pass steps all of them in one loop
//! without a branch, which compiles to SIMD (two `f64` divisions per instruction even
//! in the baseline SSE2 build), then stores every key's bucket, keeps the keys still
//! going at the front and tops up with fresh keys. No key waits for a slower one, and
//! no branch depends on which key finished. The steps are the very same IEEE
//! operations on the same exact operands, so each key gets the same bucket as from
//! [`jump`]. The cost: 2 KiB of stack and a compaction per pass; the gain, measured by
//! `core/benches/peers.rs` against the plain loop in the SSE2 build: 1.6x at 10
//! buckets, 2.5-3x at 1,000. Elsewhere (WebAssembly, where a pass does not vectorize
//! and measured slower) batches run the plain loop.
//!
//! **Wider vectors.** A build for the x86-64 baseline gets SSE2 passes: two keys per
//! instruction, and the 64-bit multiply of the generator emulated. With the `std`
//! feature (the default) each batch asks what the processor has (std caches the
//! answer, so that is one atomic load) and runs its passes compiled for AVX-512 (eight
//! keys per instruction, a native 64-bit multiply) or AVX2 (four) when present, the
//! way `memchr` picks its routines (the `isa` module below). The same Rust code,
//! compiled three times: IEEE division and multiplication are
//! correctly rounded at every vector width and Rust never fuses them, so the buckets
//! stay bit for bit those of [`jump`] (`core/tests/jump_batch.rs` checks every level
//! the machine has). Measured on an AMD EPYC (`SHARDROUTE_BENCH_ONLY=jump cargo bench
//! -p shardroute --bench peers`): 1,000 buckets 15.2 ns a key with SSE2, 9.8 with AVX2,
//! 8.1 with AVX-512; 10 buckets 6.1, 3.9 and 3.3.
//!
//! As a strategy (`{"type": "jump"}`) the shard is `jump(hash(key), n)` and the node is
//! `nodes[shard]`; replicas are the next nodes in list order. Weights are not supported.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::KeyHashing;
use crate::json::Object;
use crate::key::Key;
use crate::node::Node;
use crate::strategy::spec::{Place, Spec};

/// `{"type": "jump"}`: no parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JumpSpec;

impl Spec for JumpSpec {
    const TYPE: &'static str = "jump";
    const FIELDS: &'static [&'static str] = &["type"];
    type Placement = Jump;

    fn parse(_object: &Object<'_>, _nodes: &[Node]) -> Result<JumpSpec> {
        Ok(JumpSpec)
    }

    fn write(&self, _object: &mut Map<String, Value>, _nodes: &[Node]) {}

    fn follows_node_list(&self) -> bool {
        true
    }

    fn compile(&self, _hashing: &KeyHashing, nodes: &[Node]) -> Result<Jump> {
        Ok(Jump { nodes: nodes.len() as u32 })
    }
}

/// A compiled jump placement: just the bucket count.
#[derive(Clone, Debug)]
pub struct Jump {
    nodes: u32,
}

impl Jump {
    /// The shards of already hashed keys, into `out` (cleared first): the batch form of
    /// [`Place::shard`] for integer keys that are their own hash.
    pub(crate) fn shards_of_slice(&self, hashes: &[u64], out: &mut Vec<u32>) {
        out.clear();
        out.resize(hashes.len(), 0);
        jump_many_unchecked(hashes, self.nodes, out);
    }

    /// The shards of a stream of key hashes, into `out` (cleared first). The hashes are
    /// gathered [`CHUNK`] at a time into a stack buffer, then jumped by [`Lanes`]; keys
    /// still in flight at the end of a chunk carry over to the next.
    pub(crate) fn shards_into(&self, hashes: impl Iterator<Item = u64>, out: &mut Vec<u32>) {
        out.clear();
        if !INTERLEAVE {
            out.extend(hashes.map(|hash| jump_unchecked(hash, self.nodes)));
            return;
        }
        Isa::best().run(
            #[inline(always)]
            || self.shards_into_lanes(hashes, out),
        );
    }

    /// [`shards_into`](Jump::shards_into) through [`Lanes`], inlined into each of
    /// [`Isa::run`]'s instruction-set variants.
    #[inline(always)]
    fn shards_into_lanes(&self, hashes: impl Iterator<Item = u64>, out: &mut Vec<u32>) {
        let mut chunk = [0u64; CHUNK];
        let mut filled = 0;
        let mut lanes = Lanes::new(self.nodes);
        for hash in hashes {
            chunk[filled] = hash;
            filled += 1;
            if filled == CHUNK {
                let base = out.len();
                out.resize(base + CHUNK, 0);
                lanes.feed(&chunk, base, out);
                filled = 0;
            }
        }
        let base = out.len();
        out.resize(base + filled, 0);
        lanes.feed(&chunk[..filled], base, out);
        lanes.finish(out);
    }
}

impl Place for Jump {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        Ok(jump_unchecked(hashing.hash(key), self.nodes))
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        Ok((Some(Hashed::of(hashing, key)), Hit::Jump { buckets: self.nodes }, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        shard
    }

    fn max_replicas(&self) -> u32 {
        self.nodes
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.nodes
    }

    fn batches_hashes(&self) -> bool {
        // Jump never refuses a key: a batch is hashed whole, then jumped many at a time.
        true
    }

    fn shards_of_hashes<I: Iterator<Item = u64>>(&self, hashes: I, out: &mut Vec<u32>) {
        self.shards_into(hashes, out);
    }

    fn shards_of_hash_slice(&self, hashes: &[u64], out: &mut Vec<u32>) {
        self.shards_of_slice(hashes, out);
    }

    fn shard_is_node(&self) -> bool {
        true
    }
}

/// The jump consistent hash of `key` over `buckets` buckets, in `0..buckets`.
///
/// The same as the paper's `JumpConsistentHash(key, num_buckets)`, with `buckets` a
/// `u32` instead of an `int32_t` so no negative count exists.
///
/// # Errors
/// `no_nodes` when `buckets` is 0 (there is no bucket to return).
///
/// # Example
/// ```
/// assert_eq!(shardroute::jump(0, 1).unwrap(), 0);
/// // A value published with Guava's `Hashing.consistentHash` golden tests.
/// assert_eq!(shardroute::jump(1, 100).unwrap(), 55);
/// assert_eq!(shardroute::jump(7, 0).unwrap_err().code(), "no_nodes");
/// ```
#[inline]
pub fn jump(key: u64, buckets: u32) -> Result<u32> {
    if buckets == 0 {
        return Err(Error::new(ErrorKind::NoNodes, "jump needs at least one bucket"));
    }
    Ok(jump_unchecked(key, buckets))
}

/// The paper's 64-bit linear congruential generator multiplier.
const LCG: u64 = 2_862_933_555_777_941_757;

/// The jump consistent hash of every key over `buckets` buckets, into `out` (cleared
/// first): the batch form of [`jump`], 1.5-3x faster on long batches.
///
/// `out[i] == jump(keys[i], buckets)` for every `i`, bit for bit: the keys go through
/// jump's loop side by side (see the module docs), each with its own arithmetic.
///
/// # Errors
/// `no_nodes` when `buckets` is 0; `out` is then empty.
///
/// # Example
/// ```
/// use shardroute::strategy::hashed::jump::jump_many;
/// let keys: Vec<u64> = (0..1000).collect();
/// let mut out = Vec::new();
/// jump_many(&keys, 100, &mut out).unwrap();
/// assert_eq!(out[1], 55);
/// assert!(keys.iter().zip(&out).all(|(&key, &bucket)| shardroute::jump(key, 100).unwrap() == bucket));
/// assert_eq!(jump_many(&keys, 0, &mut out).unwrap_err().code(), "no_nodes");
/// ```
pub fn jump_many(keys: &[u64], buckets: u32, out: &mut Vec<u32>) -> Result<()> {
    out.clear();
    if buckets == 0 {
        return Err(Error::new(ErrorKind::NoNodes, "jump needs at least one bucket"));
    }
    out.resize(keys.len(), 0);
    jump_many_unchecked(keys, buckets, out);
    Ok(())
}

/// [`jump`] for `buckets >= 1` (returns 0 for `buckets == 0`).
#[inline]
pub(crate) fn jump_unchecked(mut key: u64, buckets: u32) -> u32 {
    let mut bucket: i64 = -1;
    let mut next: i64 = 0;
    while next < i64::from(buckets) {
        bucket = next;
        key = key.wrapping_mul(LCG).wrapping_add(1);
        // The paper's `(b + 1) * (double(1LL << 31) / double((key >> 33) + 1))`.
        // Every operand is exact in f64 and IEEE division is correctly rounded, so the
        // result is the same on every platform; `as i64` saturates instead of UB.
        next = ((bucket + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    bucket.max(0) as u32
}

/// Whether batches go through [`Lanes`]: only where that was measured faster. On
/// x86-64 even the baseline (SSE2) build vectorizes a pass. WebAssembly without SIMD
/// (how the WASM package is built) runs a pass one key at a time, and there the
/// lanes' extra instructions cost more than the latency they hide: 1.4-1.9x slower
/// than the plain loop in V8. Both paths give the same buckets.
const INTERLEAVE: bool = cfg!(target_arch = "x86_64");

/// Keys in flight at once in [`Lanes`].
const LANES: usize = 64;

/// Hashes gathered on the stack per [`Lanes::feed`] by [`Jump::shards_into`] (2 KiB).
const CHUNK: usize = 256;

/// `2^52`, whose `f64` has a zero mantissa.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// `m as f64` for `m < 2^52`, exactly, with integer operations and one exact
/// subtraction: `2^52 + m` has `m` as its mantissa. Unlike `as f64` on a `u64`, this
/// vectorizes on every target (SSE2 has no packed `u64 -> f64` conversion).
#[inline(always)]
fn small_to_f64(m: u64) -> f64 {
    f64::from_bits(TWO_52.to_bits() | m) - TWO_52
}

/// Many keys in flight through jump's loop at once (see the module docs).
///
/// A pass steps every key in flight once, in a plain loop over arrays that compiles to
/// SIMD without a branch; then the keys whose bucket is final are stored and dropped,
/// the others moved to the front, and fresh keys fill the free places. So no key waits
/// for another, and the end of a stream only steps the keys still going.
///
/// One step is the scalar loop's body, `key = key * LCG + 1; x = (b + 1) * (2^31 /
/// ((key >> 33) + 1))`: the same correctly rounded IEEE operations on the same exact
/// operands (integers below `2^33`) as [`jump_unchecked`]'s. The loop goes on while
/// `x < buckets`, which for an integer `buckets` and `x >= 1` is the scalar `(x as
/// i64) < buckets`, and the next bucket is then `trunc(x)`. So every key gets the
/// bucket [`jump_unchecked`] gives it, bit for bit.
///
/// Key `i` of the stream (counted over every [`feed`](Lanes::feed) call) goes to
/// `out[i]`, which the caller has sized.
struct Lanes {
    buckets: f64,
    /// How many keys are in flight: the first `len` entries of the arrays.
    len: usize,
    /// Each key's generator state.
    key: [u64; LANES],
    /// Each key's bucket `b` as the `f64` `2^52 + b` (exact, as `b < 2^32`): `b + 1` is
    /// one exact subtraction away, truncating the next bucket takes two exact
    /// additions (no conversion, which SSE2 lacks for 64-bit integers), and `b` is the
    /// low 32 bits of the `f64`'s bits.
    biased: [f64; LANES],
    /// Where each key's bucket goes in `out`.
    slot: [usize; LANES],
    /// 1 while the key goes on after this pass, 0 once its bucket is final.
    going: [usize; LANES],
}

impl Lanes {
    #[inline(always)]
    fn new(buckets: u32) -> Lanes {
        Lanes {
            buckets: f64::from(buckets),
            len: 0,
            key: [0; LANES],
            biased: [TWO_52; LANES],
            slot: [0; LANES],
            going: [0; LANES],
        }
    }

    /// Takes every key of `hashes` (`hashes[i]` into `out[base + i]`) into flight and
    /// routes them, except the keys still going when `hashes` runs out: those wait
    /// for the next call, or for [`finish`](Lanes::finish).
    #[inline(always)]
    fn feed(&mut self, hashes: &[u64], base: usize, out: &mut [u32]) {
        let mut next = 0;
        loop {
            let (from, take) = (self.len, (LANES - self.len).min(hashes.len() - next));
            self.key[from..from + take].copy_from_slice(&hashes[next..next + take]);
            self.biased[from..from + take].fill(TWO_52);
            for (i, slot) in self.slot[from..from + take].iter_mut().enumerate() {
                *slot = base + next + i;
            }
            self.len += take;
            next += take;
            if self.len < LANES {
                return;
            }
            self.pass(out);
        }
    }

    /// Routes the keys still in flight.
    #[inline(always)]
    fn finish(&mut self, out: &mut [u32]) {
        while self.len > 0 {
            self.pass(out);
        }
    }

    /// One step of every key in flight, then the compaction.
    #[inline(always)]
    fn pass(&mut self, out: &mut [u32]) {
        let buckets = self.buckets;
        // `min` tells the compiler what holds anyway, so the loops have no bounds checks.
        let len = self.len.min(LANES);
        let lanes = self.key[..len].iter_mut().zip(&mut self.biased[..len]).zip(&mut self.going[..len]);
        for ((key, biased), going) in lanes {
            *key = key.wrapping_mul(LCG).wrapping_add(1);
            // The paper's `(b + 1) * (double(1LL << 31) / double((key >> 33) + 1))`.
            let x = (*biased - (TWO_52 - 1.0)) * ((1u64 << 31) as f64 / small_to_f64((*key >> 33) + 1));
            let go_on = x < buckets;
            // When going on, `x < buckets <= 2^32`: `2^52 + x` rounds `x` to the nearest
            // integer (exactly), one too high when it rounded up.
            let rounded = x + TWO_52;
            let next = rounded - if rounded - TWO_52 > x { 1.0 } else { 0.0 };
            *biased = if go_on { next } else { *biased };
            *going = usize::from(go_on);
        }
        // Every key stores its bucket, final or not (a later pass overwrites it): no
        // branch on which keys finished, a coin toss per key.
        let mut kept = 0;
        for lane in 0..len {
            out[self.slot[lane]] = self.biased[lane].to_bits() as u32;
            // `kept <= lane < LANES`; the mask only spares a bounds check.
            let to = kept % LANES;
            self.key[to] = self.key[lane];
            self.biased[to] = self.biased[lane];
            self.slot[to] = self.slot[lane];
            kept += self.going[lane];
        }
        self.len = kept;
    }
}

/// The jump hash of every `hashes[i]` into `out[i]`, as [`jump_unchecked`] would give it,
/// many keys at a time (see [`Lanes`]).
///
/// # Panics
/// When `out` is shorter than `hashes`.
pub(crate) fn jump_many_unchecked(hashes: &[u64], buckets: u32, out: &mut [u32]) {
    jump_many_at(Isa::best(), hashes, buckets, out);
}

/// [`jump_many_unchecked`] with the passes compiled for `isa`, which the processor has.
fn jump_many_at(isa: Isa, hashes: &[u64], buckets: u32, out: &mut [u32]) {
    let out = &mut out[..hashes.len()];
    if !INTERLEAVE {
        for (hash, bucket) in hashes.iter().zip(out) {
            *bucket = jump_unchecked(*hash, buckets);
        }
        return;
    }
    if buckets <= 1 {
        // Every key is in bucket 0 (and `jump_unchecked` returns 0 for 0 buckets).
        out.fill(0);
        return;
    }
    isa.run(
        #[inline(always)]
        || {
            let mut lanes = Lanes::new(buckets);
            lanes.feed(hashes, 0, out);
            lanes.finish(out);
        },
    );
}

/// `jump_many` run with every instruction set this processor has ([`Isa::available`]),
/// each result named: for tests that every compiled variant of the batch passes gives
/// the scalar [`jump`]'s buckets. Not part of the API.
#[doc(hidden)]
pub fn jump_many_each_isa(keys: &[u64], buckets: u32) -> Vec<(&'static str, Vec<u32>)> {
    Isa::available()
        .map(|isa| {
            let mut out = alloc::vec![0; keys.len()];
            if buckets > 0 {
                jump_many_at(isa, keys, buckets, &mut out);
            }
            (isa.name(), out)
        })
        .collect()
}

use isa::Isa;

/// Which vector instructions a batch's passes are compiled for, chosen at run time.
///
/// The only `unsafe` of the crate: calling a function compiled for instructions the
/// processor may lack is undefined behaviour, so each call is behind the processor's
/// own answer (`is_x86_feature_detected!`, which caches it), as in `memchr`.
mod isa {
    #![allow(unsafe_code)]

    /// An instruction set the batch passes can be compiled for.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Isa {
        /// What the build targets (SSE2 on x86-64).
        Baseline,
        /// AVX2: four `f64` lanes per instruction.
        Avx2,
        /// AVX-512 F and DQ: eight lanes and a native 64-bit multiply.
        Avx512,
    }

    impl Isa {
        /// The widest this processor has; `Baseline` without `std` (no detection) and
        /// off x86-64.
        #[inline]
        pub(crate) fn best() -> Isa {
            #[cfg(all(feature = "std", target_arch = "x86_64"))]
            {
                if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
                    return Isa::Avx512;
                }
                if std::is_x86_feature_detected!("avx2") {
                    return Isa::Avx2;
                }
            }
            Isa::Baseline
        }

        /// Every level up to [`best`](Isa::best), narrowest first.
        pub(crate) fn available() -> impl Iterator<Item = Isa> {
            let best = Isa::best();
            [Isa::Baseline, Isa::Avx2, Isa::Avx512].into_iter().filter(move |&isa| isa as u8 <= best as u8)
        }

        /// `baseline`, `avx2` or `avx512`.
        pub(crate) fn name(self) -> &'static str {
            match self {
                Isa::Baseline => "baseline",
                Isa::Avx2 => "avx2",
                Isa::Avx512 => "avx512",
            }
        }

        /// Runs `body` compiled for this instruction set: `body` and what it calls
        /// must be `#[inline(always)]` to be compiled into the variant. `self` must
        /// come from [`best`](Isa::best) or [`available`](Isa::available).
        #[inline(always)]
        pub(super) fn run<R>(self, body: impl FnOnce() -> R) -> R {
            match self {
                // SAFETY: `best` saw the processor report AVX-512 F and DQ.
                #[cfg(all(feature = "std", target_arch = "x86_64"))]
                Isa::Avx512 => unsafe { avx512(body) },
                // SAFETY: `best` saw the processor report AVX2.
                #[cfg(all(feature = "std", target_arch = "x86_64"))]
                Isa::Avx2 => unsafe { avx2(body) },
                _ => body(),
            }
        }
    }

    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn avx512<R>(body: impl FnOnce() -> R) -> R {
        body()
    }

    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2<R>(body: impl FnOnce() -> R) -> R {
        body()
    }
}
