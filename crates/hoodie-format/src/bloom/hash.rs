//! The hashing of Java Hudi's bloom filters: `BloomFilterUtils` sizing, its MurmurHash2 port
//! and the hash positions of a key, also several keys side by side.

use super::*;

/// Java `BloomFilterUtils.getBitSize` / `getNumHashes`, with Java's double arithmetic and
/// saturating `(int)` casts (Rust's `as i32` from `f64` saturates and maps NaN to 0 alike).
pub(super) fn java_sizing(num_entries: usize, fpp: f64) -> Result<(i32, i32), BloomError> {
    let invalid = || BloomError::InvalidSizing { num_entries, fpp };
    // Java would size a filter for fpp <= 0 too (up to Integer.MAX_VALUE bits); reject it here.
    if !(fpp > 0.0 && fpp < 1.0) {
        return Err(invalid());
    }
    let n = i32::try_from(num_entries).map_err(|_| invalid())?;
    let ln2 = 2f64.ln();
    let log2_squared = ln2 * ln2;
    let vector_size = (f64::from(n) * (-fpp.ln() / log2_squared)).ceil() as i32;
    if vector_size <= 0 {
        return Err(invalid());
    }
    let num_hashes = (ln2 * f64::from(vector_size) / f64::from(n)).ceil() as i32;
    if num_hashes <= 0 {
        return Err(invalid());
    }
    Ok((vector_size, num_hashes))
}

pub(super) const MURMUR_M: i32 = 0x5bd1_e995;

/// Hudi's `MurmurHash.hash(data, 0, data.length, seed)`: MurmurHash2 (32 bit) with Java's tail
/// handling (tail bytes sign-extended; the first tail byte is shifted highest).
#[inline]
pub(super) fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    // Java takes the length as an int; arrays longer than i32::MAX cannot exist there.
    let mut h = seed ^ (data.len() as i32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        h = h.wrapping_mul(MURMUR_M) ^ murmur_block(chunk);
    }
    if let Some(tail) = murmur_tail(chunks.remainder()) {
        h = (h ^ tail).wrapping_mul(MURMUR_M);
    }
    murmur_finish(h)
}

/// The mixed value of one 4-byte (little-endian) block; it does not depend on the seed.
#[inline(always)]
pub(super) fn murmur_block(chunk: &[u8]) -> i32 {
    let mut k = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    k = k.wrapping_mul(MURMUR_M);
    k ^= ((k as u32) >> 24) as i32;
    k.wrapping_mul(MURMUR_M)
}

/// The value 1 to 3 tail bytes are xor-ed in as (`None` without a tail); it does not depend on
/// the seed. Java: `(int) data[length - 3] << 16`, `(int) data[length - 2] << 8`,
/// `data[length - 1]` on signed bytes, so each byte is sign-extended before shifting.
#[inline(always)]
pub(super) fn murmur_tail(tail: &[u8]) -> Option<i32> {
    let len = tail.len();
    if len == 0 {
        return None;
    }
    let mut value = i32::from(tail[len - 1] as i8);
    if len >= 2 {
        value ^= i32::from(tail[len - 2] as i8) << 8;
    }
    if len >= 3 {
        value ^= i32::from(tail[len - 3] as i8) << 16;
    }
    Some(value)
}

#[inline(always)]
pub(super) fn murmur_finish(mut h: i32) -> i32 {
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(MURMUR_M);
    h ^ ((h as u32) >> 15) as i32
}

/// Java `Math.abs(h % vectorSize)`: `%` truncates like Java's, and the remainder's magnitude is
/// below `vector_size`, so the absolute value cannot overflow.
#[inline(always)]
pub(super) fn bit_position(hash: i32, vector_size: i32) -> usize {
    (hash % vector_size).unsigned_abs() as usize
}

/// Keys hashed together by [`HoodieBloomFilter::add_all`].
pub(super) const LANES: usize = 4;

/// Keys up to this many 4-byte blocks (256 bytes) take the interleaved path of
/// [`HoodieBloomFilter::add_all`]; longer ones are added one at a time.
pub(super) const LANE_BLOCKS: usize = 64;

/// Filters with up to this many hash functions (the default has 30) buffer the positions of
/// [`HoodieBloomFilter::add_all`]'s keys on the stack.
pub(super) const LANE_HASHES: usize = 64;

/// Hashes [`LANES`] keys at once. Java re-hashes the whole key for each of the chained hash
/// functions, and every chain step depends on the previous one, so a single key is bound by
/// multiply latency. Here the seed-independent block mixing is done once per key and the chains
/// of several keys are interleaved; the values are exactly [`murmur_hash`]'s.
pub(super) struct LaneKeys {
    pub(super) blocks: [[i32; LANE_BLOCKS]; LANES],
    pub(super) num_blocks: [usize; LANES],
    pub(super) tails: [Option<i32>; LANES],
    pub(super) lens: [i32; LANES],
    pub(super) same_num_blocks: bool,
}

impl LaneKeys {
    /// `None` if a key is too long for the lane buffers.
    #[inline]
    pub(super) fn new(keys: [&[u8]; LANES]) -> Option<Self> {
        if keys.iter().any(|k| k.len() > 4 * LANE_BLOCKS) {
            return None;
        }
        let mut lanes = LaneKeys {
            blocks: [[0; LANE_BLOCKS]; LANES],
            num_blocks: [0; LANES],
            tails: [None; LANES],
            lens: [0; LANES],
            same_num_blocks: true,
        };
        for (lane, key) in keys.iter().enumerate() {
            let chunks = key.chunks_exact(4);
            lanes.tails[lane] = murmur_tail(chunks.remainder());
            lanes.num_blocks[lane] = key.len() / 4;
            lanes.lens[lane] = key.len() as i32;
            for (slot, chunk) in lanes.blocks[lane].iter_mut().zip(chunks) {
                *slot = murmur_block(chunk);
            }
        }
        lanes.same_num_blocks = lanes.num_blocks.iter().all(|&n| n == lanes.num_blocks[0]);
        Some(lanes)
    }

    /// `murmur_hash(key[lane], seeds[lane])` for every lane.
    #[inline(always)]
    pub(super) fn hash(&self, seeds: [i32; LANES]) -> [i32; LANES] {
        let mut h: [i32; LANES] = std::array::from_fn(|lane| seeds[lane] ^ self.lens[lane]);
        if self.same_num_blocks {
            for block in 0..self.num_blocks[0] {
                for (h, blocks) in h.iter_mut().zip(&self.blocks) {
                    *h = h.wrapping_mul(MURMUR_M) ^ blocks[block];
                }
            }
        } else {
            for ((h, blocks), &n) in h.iter_mut().zip(&self.blocks).zip(&self.num_blocks) {
                for &k in &blocks[..n] {
                    *h = h.wrapping_mul(MURMUR_M) ^ k;
                }
            }
        }
        for (h, tail) in h.iter_mut().zip(self.tails) {
            if let Some(tail) = tail {
                *h = (*h ^ tail).wrapping_mul(MURMUR_M);
            }
            *h = murmur_finish(*h);
        }
        h
    }
}

/// The bit positions Java's `HashFunction.hash` yields for a key, without allocating.
pub(super) struct HashPositions<'a> {
    pub(super) key: &'a [u8],
    pub(super) remaining: i32,
    pub(super) hash: i32,
    pub(super) vector_size: i32,
}

impl<'a> HashPositions<'a> {
    #[inline]
    pub(super) fn new(key: &'a [u8], num_hashes: i32, vector_size: i32) -> Self {
        Self {
            key,
            remaining: num_hashes,
            hash: 0,
            vector_size,
        }
    }
}

impl Iterator for HashPositions<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining <= 0 {
            return None;
        }
        self.remaining -= 1;
        self.hash = murmur_hash(self.key, self.hash);
        Some(bit_position(self.hash, self.vector_size))
    }
}
