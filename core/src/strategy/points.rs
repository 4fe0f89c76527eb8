//! Sorting the points of a ring (ring points, ketama points, tokens) in linear time.
//!
//! **What.** [`sort_points`] orders `(position, owner)` pairs by position, ties by a
//! comparator the strategy gives, and returns the sorted positions and owners as two
//! arrays plus a bucket table over the top position bits (what the `ring` searches).
//!
//! **How.** A counting sort on the top `b` bits of the positions (`b = floor(log2 P)`,
//! at most 20), which is stable, then a sort of each bucket on the full comparator. On
//! hashed positions a bucket holds one to four points, so the whole sort is two linear
//! passes and a few comparisons per point; a bucket that adversarial positions fill
//! (CRC-32 collisions, say) falls back to a comparison sort, `O(P log P)`, never worse.
//!
//! **Why.** A comparison sort of 4 Mi 16-byte points is the whole cost of building the
//! largest ring, and the WebAssembly package compiles std's size-optimized sorts, where
//! the unstable sort is a heapsort: about 25x slower than native on 16 Mi points (its
//! random accesses miss the cache at every level). Two sequential passes cost the same
//! everywhere. Memory: the input (16 bytes a point) and the output (12 bytes a point)
//! live together once; nothing else grows with the points.

use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// The most index bits: a table of 2^20 + 1 entries (4 MiB).
pub(crate) const MAX_INDEX_BITS: u32 = 20;

/// Sorted points: parallel arrays and the bucket table over them.
pub(crate) struct SortedPoints {
    /// Positions in ascending order.
    pub positions: Vec<u64>,
    /// The owner of each position.
    pub owners: Vec<u32>,
    /// `starts[i]`: the number of points whose bucket (`position >> shift`) is below `i`;
    /// `2^b + 1` entries, so bucket `i` is `positions[starts[i]..starts[i + 1]]`.
    pub starts: Vec<u32>,
    /// `64 - (leading zeros shared by every position) - b`.
    pub shift: u32,
}

/// `value >> shift` for `shift` in `0..=64` (64 gives 0).
#[inline]
pub(crate) fn shift_right(value: u64, shift: u32) -> u64 {
    value.checked_shr(shift).unwrap_or(0)
}

/// Sorts `points` by position, then by `tie` for equal positions (a total order on the
/// owners, or `Equal` to keep the input order: the bucket sort is stable).
pub(crate) fn sort_points(points: Vec<(u64, u32)>, tie: impl Fn(u32, u32) -> Ordering) -> SortedPoints {
    let len = points.len() as u64;
    // floor(log2 P): between one and two points per bucket on a uniform hash.
    let bits = (63 - len.max(1).leading_zeros()).min(MAX_INDEX_BITS);
    // Only the bits below the leading zeros of the largest position vary.
    let largest = points.iter().map(|p| p.0).max().unwrap_or(0);
    let width = 64 - largest.leading_zeros();
    let bits = bits.min(width);
    let shift = width - bits;
    let buckets = 1usize << bits;
    let mut starts = vec![0u32; buckets + 1];
    for point in &points {
        starts[shift_right(point.0, shift) as usize + 1] += 1;
    }
    for bucket in 0..buckets {
        starts[bucket + 1] += starts[bucket];
    }
    let mut positions = vec![0u64; points.len()];
    let mut owners = vec![0u32; points.len()];
    let mut next = starts.clone();
    for (position, owner) in points {
        let at = &mut next[shift_right(position, shift) as usize];
        positions[*at as usize] = position;
        owners[*at as usize] = owner;
        *at += 1;
    }
    drop(next);
    let order = |a: &(u64, u32), b: &(u64, u32)| a.0.cmp(&b.0).then_with(|| tie(a.1, b.1));
    let mut bucket: Vec<(u64, u32)> = Vec::new();
    for pair in starts.windows(2) {
        let (start, end) = (pair[0] as usize, pair[1] as usize);
        if end - start < 2 {
            continue;
        }
        bucket.clear();
        bucket.extend(positions[start..end].iter().copied().zip(owners[start..end].iter().copied()));
        // Stable, so `Equal` ties keep the input order; insertion sort for the short
        // buckets of hashed positions, a merge sort (`O(n log n)`) for crowded ones.
        bucket.sort_by(order);
        for (offset, &(position, owner)) in bucket.iter().enumerate() {
            positions[start + offset] = position;
            owners[start + offset] = owner;
        }
    }
    SortedPoints { positions, owners, starts, shift }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::hashed::rendezvous::fmix64;

    /// The definition: a stable comparison sort on (position, tie).
    fn naive(points: &[(u64, u32)], tie: impl Fn(u32, u32) -> Ordering) -> Vec<(u64, u32)> {
        let mut sorted = points.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| tie(a.1, b.1)));
        sorted
    }

    fn check(points: Vec<(u64, u32)>) {
        let expected = naive(&points, |_, _| Ordering::Equal);
        let reversed = naive(&points, |a, b| b.cmp(&a));
        let sorted = sort_points(points.clone(), |_, _| Ordering::Equal);
        let pairs: Vec<(u64, u32)> = sorted.positions.iter().copied().zip(sorted.owners.iter().copied()).collect();
        assert_eq!(pairs, expected);
        for (bucket, pair) in sorted.starts.windows(2).enumerate() {
            for &position in &sorted.positions[pair[0] as usize..pair[1] as usize] {
                assert_eq!(shift_right(position, sorted.shift), bucket as u64);
            }
        }
        let sorted = sort_points(points, |a, b| b.cmp(&a));
        let pairs: Vec<(u64, u32)> = sorted.positions.iter().copied().zip(sorted.owners).collect();
        assert_eq!(pairs, reversed);
    }

    #[test]
    fn matches_a_comparison_sort() {
        check(Vec::new());
        check(alloc::vec![(5, 0)]);
        check((0..10_000u32).map(|i| (fmix64(u64::from(i)), i)).collect());
        // Positions in the low 32 bits only (CRC-32), duplicates, extremes, all equal.
        check((0..10_000u32).map(|i| (fmix64(u64::from(i / 3)) >> 32, i)).collect());
        check((0..1000u32).map(|i| (if i % 2 == 0 { 0 } else { u64::MAX }, i)).collect());
        check((0..1000u32).map(|i| (7, 1000 - i)).collect());
        check((0..1000u32).map(|i| (u64::from(i) << 54, i)).collect());
    }
}
