//! Flat bitmaps: the cluster-wide core map (bit = first core of the node +
//! core index, Slurm's `core_bitmap` layout) and small per-node core sets.
//!
//! Up to 128 bits live inline (no heap allocation): per-node core sets are
//! built for every candidate node of every test, and cloned with every job
//! record, so they must cost no allocation.

use slurm_wasm_sdk::Ones;
use smallvec::SmallVec;

/// The words of a bitmap: two inline, more on the heap.
type Words = SmallVec<[u64; 2]>;

/// A fixed-length bitmap of 64-bit words, bit `i` in word `i / 64`.
#[derive(Debug, PartialEq, Eq, Default)]
pub struct Bits {
    len: usize,
    words: Words,
}

/// A copy of the words in one go (`SmallVec`'s own `clone` pushes them
/// one at a time, and core sets are cloned with every offer and job).
impl Clone for Bits {
    fn clone(&self) -> Self {
        Bits {
            len: self.len,
            words: Words::from_slice(&self.words),
        }
    }
}

impl Bits {
    /// `len` clear bits.
    pub fn new(len: usize) -> Self {
        Bits {
            len,
            words: smallvec::smallvec![0; len.div_ceil(64)],
        }
    }

    /// Makes `self` equal to `other`, reusing `self`'s buffer.
    pub fn copy_from(&mut self, other: &Bits) {
        self.len = other.len;
        self.words.clear();
        self.words.extend_from_slice(&other.words);
    }

    /// `len` set bits.
    pub fn full(len: usize) -> Self {
        let mut b = Bits {
            len,
            words: smallvec::smallvec![u64::MAX; len.div_ceil(64)],
        };
        b.trim();
        b
    }

    /// From the contract's words; fails on a wrong word count.
    pub fn from_words(len: usize, words: &[u64]) -> Result<Self, String> {
        if words.len() != len.div_ceil(64) {
            return Err(format!(
                "bitmap of {len} bits needs {} words, got {}",
                len.div_ceil(64),
                words.len()
            ));
        }
        let mut b = Bits {
            len,
            words: Words::from_slice(words),
        };
        b.trim();
        Ok(b)
    }

    fn trim(&mut self) {
        if !self.len.is_multiple_of(64) {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << (self.len % 64)) - 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }

    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn any(&self) -> bool {
        self.words.iter().any(|w| *w != 0)
    }

    /// The set bits, in increasing order.
    pub fn ones(&self) -> Ones<'_, u64> {
        Ones::new(&self.words, self.len)
    }

    /// `self &= !other` (lengths must match).
    pub fn and_not(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// `self &= other` (lengths must match).
    pub fn and(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    pub fn or(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub fn intersects(&self, other: &Bits) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// The 64 bits from bit `start` on (zero past the end).
    pub fn bits64(&self, start: usize) -> u64 {
        let (q, r) = (start / 64, start % 64);
        let lo = self.words.get(q).copied().unwrap_or(0) >> r;
        let hi = if r == 0 {
            0
        } else {
            self.words.get(q + 1).copied().unwrap_or(0) << (64 - r)
        };
        lo | hi
    }

    /// ORs `bits` into the 64 bits from bit `start` on (bits that would
    /// fall past the last word are dropped).
    pub fn or_window(&mut self, start: usize, bits: u64) {
        let (q, r) = (start / 64, start % 64);
        if let Some(w) = self.words.get_mut(q) {
            *w |= bits << r;
        }
        if r != 0 {
            if let Some(w) = self.words.get_mut(q + 1) {
                *w |= bits >> (64 - r);
            }
        }
    }

    /// Bits `off..off + n` as a bitmap of `n` bits.
    pub fn extract(&self, off: usize, n: usize) -> Bits {
        let mut out = Bits::new(n);
        for w in 0..out.words.len() {
            out.words[w] = self.bits64(off + w * 64);
        }
        out.trim();
        out
    }

    /// Writes `src` over bits `off..off + src.len()`.
    pub fn insert(&mut self, off: usize, src: &Bits) {
        for i in 0..src.len {
            if src.get(i) {
                self.set(off + i);
            } else {
                self.clear(off + i);
            }
        }
    }

    /// ORs `src` into bits `off..` (`off + src.len()` must not pass the
    /// end), a word of `src` at a time.
    pub fn or_at(&mut self, off: usize, src: &Bits) {
        self.merge_at(off, src, |a, b| *a |= b);
    }

    /// Applies `op(word, bits)` to the words of `self` under `src` placed at
    /// `off` (`bits` = the part of `src` falling in that word).
    fn merge_at(&mut self, off: usize, src: &Bits, op: impl Fn(&mut u64, u64)) {
        let (q, r) = (off / 64, off % 64);
        for (w, &s) in src.words.iter().enumerate() {
            if s == 0 {
                continue;
            }
            op(&mut self.words[q + w], s << r);
            if r != 0 && s >> (64 - r) != 0 {
                op(&mut self.words[q + w + 1], s >> (64 - r));
            }
        }
    }

    /// Does a set bit of `src`, placed at `off..`, meet a set bit of `self`?
    /// Costs the words of `src`, not of `self`.
    pub fn intersects_at(&self, off: usize, src: &Bits) -> bool {
        src.words
            .iter()
            .enumerate()
            .any(|(w, &s)| s != 0 && self.bits64(off + w * 64) & s != 0)
    }

    /// Clears the set bits of `src` at `off..` (`off + src.len()` must not
    /// pass the end), a word of `src` at a time.
    pub fn clear_at(&mut self, off: usize, src: &Bits) {
        self.merge_at(off, src, |a, b| *a &= !b);
    }

    /// Any bit set in `off..off + n`?
    pub fn any_in(&self, off: usize, n: usize) -> bool {
        self.count_range(off, off + n) > 0
    }

    /// Bits `lo..hi` of `self` become those of `other` (same length).
    pub fn copy_range(&mut self, other: &Bits, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| (a & !m) | (b & m));
    }

    /// Clears the bits of `lo..hi` that are set in `other` (same length).
    pub fn and_not_range(&mut self, other: &Bits, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| a & !(b & m));
    }

    /// Clears the bits of `lo..hi` that are clear in `other` (same length).
    pub fn and_range(&mut self, other: &Bits, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| a & (b | !m));
    }

    /// Replaces each word `a` of `self` overlapping `lo..hi` by
    /// `f(a, b, mask)`, `b` the word of `other` at the same place and
    /// `mask` the bits of the word inside the range.
    fn merge_range(
        &mut self,
        other: &Bits,
        lo: usize,
        hi: usize,
        f: impl Fn(u64, u64, u64) -> u64,
    ) {
        let hi = hi.min(self.len).min(other.len);
        for_each_word(lo, hi, |q, mask| {
            self.words[q] = f(self.words[q], other.words[q], mask);
        });
    }

    /// Set bits in `lo..hi`, a word at a time.
    pub fn count_range(&self, lo: usize, hi: usize) -> usize {
        let mut total = 0;
        for_each_word(lo, hi.min(self.len), |q, mask| {
            total += (self.words[q] & mask).count_ones() as usize;
        });
        total
    }
}

/// Calls `f(word, mask)` for each 64-bit word overlapping bits `lo..hi`,
/// `mask` selecting the bits of the word inside the range.
fn for_each_word(lo: usize, hi: usize, mut f: impl FnMut(usize, u64)) {
    let mut i = lo;
    while i < hi {
        let (q, r) = (i / 64, i % 64);
        let span = (64 - r).min(hi - i);
        let mask = if span == 64 {
            u64::MAX
        } else {
            ((1u64 << span) - 1) << r
        };
        f(q, mask);
        i += span;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_merges_touch_only_the_range() {
        // 0..200 all set; `other` has bits 60..70 and 150 set.
        let mut other = Bits::new(200);
        for i in (60..70).chain([150]) {
            other.set(i);
        }
        let mut a = Bits::full(200);
        a.and_not_range(&other, 62, 151);
        let cleared: Vec<usize> = (0..200).filter(|&i| !a.get(i)).collect();
        assert_eq!(cleared, (62..70).chain([150]).collect::<Vec<_>>());
        // Inside 0..64 only 60 and 61 stay (62, 63 were cleared above).
        a.and_range(&other, 0, 64);
        let set: Vec<usize> = a.ones().take_while(|&i| i <= 70).collect();
        assert_eq!(set, vec![60, 61, 70]);
        let mut b = Bits::new(200);
        b.copy_range(&other, 65, 151);
        assert_eq!(b.ones().collect::<Vec<_>>(), vec![65, 66, 67, 68, 69, 150]);
    }

    #[test]
    fn extract_and_insert_cross_words() {
        let mut b = Bits::new(200);
        for i in [3, 63, 64, 65, 130, 199] {
            b.set(i);
        }
        let e = b.extract(60, 10);
        assert_eq!(e.ones().collect::<Vec<_>>(), vec![3, 4, 5]);
        let mut c = Bits::new(200);
        c.insert(60, &e);
        assert_eq!(c.ones().collect::<Vec<_>>(), vec![63, 64, 65]);
        assert_eq!(b.count(), 6);
        assert_eq!(Bits::full(70).count(), 70);
        // `b` has 63, 64, 65: a node-local set at 60 meets it at 3..=5 only.
        let mut local = Bits::new(10);
        local.set(2);
        assert!(!b.intersects_at(60, &local));
        local.set(4);
        assert!(b.intersects_at(60, &local));
    }

    #[test]
    fn or_and_clear_at_cross_words() {
        // A 70-bit node-local set placed at bit 100 of a 200-bit map spans
        // words 1-2 (bits 100-169): bits 0, 27, 28 and 69 land on 100, 127,
        // 128 and 169.
        let mut local = Bits::new(70);
        for i in [0, 27, 28, 69] {
            local.set(i);
        }
        let mut map = Bits::new(200);
        map.set(99);
        map.set(170);
        map.or_at(100, &local);
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            vec![99, 100, 127, 128, 169, 170]
        );
        map.clear_at(100, &local);
        assert_eq!(map.ones().collect::<Vec<_>>(), vec![99, 170]);
        // Word-aligned placement.
        map.or_at(128, &local);
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            vec![99, 128, 155, 156, 170, 197]
        );
    }
}
