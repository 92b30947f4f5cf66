//! The bit vectors of Java Hudi's bloom filters: one plain filter (`InternalBloomFilter`), the
//! rows of a dynamic one (`InternalDynamicBloomFilter`), and their headers on the wire.

use super::*;

/// One plain bloom filter (Java `InternalBloomFilter`): a header and a bit vector.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct BitRow {
    /// Positive (validated on read, computed positive on creation).
    pub(super) num_hashes: i32,
    /// Positive (validated on read, computed positive on creation).
    pub(super) vector_size: i32,
    /// Bit `i` is bit `i % 64` of `words[i / 64]`; bits at or beyond `vector_size` stay zero.
    pub(super) words: Vec<u64>,
}

impl BitRow {
    pub(super) fn new(num_hashes: i32, vector_size: i32) -> Self {
        Self {
            num_hashes,
            vector_size,
            words: vec![0; (vector_size as usize).div_ceil(64)],
        }
    }

    #[inline]
    pub(super) fn add(&mut self, key: &[u8]) {
        for pos in HashPositions::new(key, self.num_hashes, self.vector_size) {
            self.set(pos);
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, pos: usize) {
        self.words[pos >> 6] |= 1u64 << (pos & 63);
    }

    #[inline]
    pub(super) fn contains(&self, key: &[u8]) -> bool {
        HashPositions::new(key, self.num_hashes, self.vector_size)
            .all(|pos| self.words[pos >> 6] & (1u64 << (pos & 63)) != 0)
    }

    pub(super) fn bit_bytes(&self) -> usize {
        (self.vector_size as usize).div_ceil(8)
    }

    pub(super) fn serialized_len(&self) -> usize {
        HEADER_LEN + self.bit_bytes()
    }

    pub(super) fn write(&self, out: &mut Vec<u8>) {
        write_header(out, self.num_hashes, self.vector_size);
        // Little-endian words give exactly Java's layout: byte j holds bits 8j..8j+7, LSB first.
        let end = out.len() + self.bit_bytes();
        for word in &self.words {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.truncate(end);
    }

    pub(super) fn read(reader: &mut Reader<'_>) -> Result<Self, BloomError> {
        let (num_hashes, vector_size) = read_header(reader)?;
        let mut row = BitRow::new(num_hashes, vector_size);
        let bits = reader.take(row.bit_bytes())?;
        for (word, chunk) in row.words.iter_mut().zip(bits.chunks(8)) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            *word = u64::from_le_bytes(buf);
        }
        // Java's readFields only looks at bits below vectorSize.
        let used = vector_size as u32 % 64;
        if used != 0 {
            if let Some(last) = row.words.last_mut() {
                *last &= (1u64 << used) - 1;
            }
        }
        Ok(row)
    }
}

/// Java `InternalDynamicBloomFilter` (Hudi's bounded variant of Hadoop's `DynamicBloomFilter`).
#[derive(Clone)]
pub(super) struct DynamicFilter {
    /// Outer header: parameters for rows added later.
    pub(super) num_hashes: i32,
    pub(super) vector_size: i32,
    /// Java `nr`: keys per row before a new row is started.
    pub(super) entries_per_row: i32,
    /// Java `currentNbRecord`: keys added since the last row was started (it keeps counting once
    /// keys go round-robin).
    pub(super) keys_in_current_row: i32,
    /// Java `maxNr` (not serialized; 0 after decoding, as in Java).
    pub(super) max_entries: i32,
    /// Java `reachedMax` (not serialized).
    pub(super) reached_max: bool,
    /// Java `curMatrixIndex` (not serialized).
    pub(super) round_robin_index: usize,
    /// Java `matrix`; never empty.
    pub(super) rows: Vec<BitRow>,
}

impl DynamicFilter {
    #[inline]
    pub(super) fn add(&mut self, key: &[u8]) {
        let row = self.next_row();
        self.rows[row].add(key);
    }

    /// The row the next key goes to, counting that key (Java `add` minus the hashing).
    #[inline]
    pub(super) fn next_row(&mut self) -> usize {
        let row = self.active_row();
        self.keys_in_current_row = self.keys_in_current_row.wrapping_add(1);
        row
    }

    /// Java `getActiveStandardBF` plus the row creation in `add`, step by step (with Java's
    /// wrapping `int` arithmetic for `matrix.length * nr`).
    #[inline]
    pub(super) fn active_row(&mut self) -> usize {
        if self.reached_max {
            let row = self.round_robin_index % self.rows.len();
            self.round_robin_index = self.round_robin_index.wrapping_add(1);
            return row;
        }
        if self.keys_in_current_row >= self.entries_per_row {
            let capacity = (self.rows.len() as i32).wrapping_mul(self.entries_per_row);
            if capacity < self.max_entries {
                self.rows
                    .push(BitRow::new(self.num_hashes, self.vector_size));
                self.keys_in_current_row = 0;
            } else {
                // The first key after the bound goes to row 0, and so does the next one: Java
                // returns matrix[0] here without advancing curMatrixIndex.
                self.reached_max = true;
                return 0;
            }
        }
        self.rows.len() - 1
    }
}

pub(super) fn write_header(out: &mut Vec<u8>, num_hashes: i32, vector_size: i32) {
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&num_hashes.to_be_bytes());
    out.push(MURMUR_HASH);
    out.extend_from_slice(&vector_size.to_be_bytes());
}

/// Reads and validates a filter header, returning `(num_hashes, vector_size)`.
pub(super) fn read_header(reader: &mut Reader<'_>) -> Result<(i32, i32), BloomError> {
    let version = reader.read_i32()?;
    if version > 0 {
        // Hadoop's unversioned format: the field is the hash count and the hash is Jenkins.
        return Err(BloomError::UnsupportedHashType { hash_type: 0 });
    }
    if version != VERSION {
        return Err(BloomError::UnsupportedVersion { version });
    }
    let num_hashes = reader.read_i32()?;
    let hash_type = reader.take(1)?[0] as i8;
    let vector_size = reader.read_i32()?;
    if hash_type != MURMUR_HASH as i8 {
        return Err(BloomError::UnsupportedHashType { hash_type });
    }
    if num_hashes <= 0 {
        return Err(BloomError::InvalidNumHashes { num_hashes });
    }
    if vector_size <= 0 {
        return Err(BloomError::InvalidVectorSize { vector_size });
    }
    Ok((num_hashes, vector_size))
}

/// A cursor over big-endian bytes (Java `DataInput`).
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], BloomError> {
        if self.remaining() < n {
            return Err(BloomError::Truncated {
                offset: self.pos,
                needed: n,
                got: self.remaining(),
            });
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    pub(super) fn read_i32(&mut self) -> Result<i32, BloomError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}
