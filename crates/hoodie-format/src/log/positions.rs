//! Record positions of a log block (header `RECORD_POSITIONS`, table versions 8 and 9): the
//! 0-based rows of the slice's base file its records update or delete, as Java's
//! `Roaring64NavigableMap` serialises them portably, in Base64. A reader that knows them can
//! merge a block into the base file by row rather than by key (Hudi 1.x's position-based
//! merging); one that does not merges by key, as hoodie's reader does.
//!
//! The portable form: the number of 32-bit buckets (u64, little-endian), then per bucket its
//! high 32 bits (u32 LE) and a 32-bit RoaringBitmap in its portable form (cookie 12346 and the
//! container count, then per container its key and cardinality - 1 (u16 LE each), then each
//! container's byte offset (u32 LE), then the containers: up to 4096 values as sorted u16s,
//! more as a 65536-bit bitmap). Checked byte for byte against a header Spark with Hudi 1.2.0
//! wrote (the unit test below).

use base64::Engine;

use crate::error::{FormatError, Result};

/// The cookie of a RoaringBitmap without run containers.
const COOKIE_NO_RUNS: u32 = 12346;
/// Above this many values a container is a bitmap.
const ARRAY_MAX: usize = 4096;

/// The `RECORD_POSITIONS` header of `sorted`, distinct positions in ascending order.
pub(crate) fn encode_positions(sorted: &[u64]) -> String {
    let mut buckets: Vec<(u32, Vec<u32>)> = Vec::new();
    for &p in sorted {
        let (high, low) = ((p >> 32) as u32, p as u32);
        match buckets.last_mut() {
            Some((h, lows)) if *h == high => lows.push(low),
            _ => buckets.push((high, vec![low])),
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&(buckets.len() as u64).to_le_bytes());
    for (high, lows) in &buckets {
        out.extend_from_slice(&high.to_le_bytes());
        bitmap_32(lows, &mut out);
    }
    base64::engine::general_purpose::STANDARD.encode(out)
}

/// The positions a `RECORD_POSITIONS` header holds, in ascending order (array and bitmap
/// containers, as Java writes them; a bitmap with run containers is refused).
pub fn decode_positions(header: &str) -> Result<Vec<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(header.trim())
        .map_err(|e| damaged(&e.to_string()))?;
    let mut r = Reader {
        bytes: &bytes,
        at: 0,
    };
    let buckets = u64::from_le_bytes(r.take::<8>()?);
    let mut out = Vec::new();
    for _ in 0..buckets {
        let high = u64::from(u32::from_le_bytes(r.take::<4>()?)) << 32;
        if u32::from_le_bytes(r.take::<4>()?) != COOKIE_NO_RUNS {
            return Err(damaged(
                "a bitmap with run containers or of an unknown form",
            ));
        }
        let n = u32::from_le_bytes(r.take::<4>()?) as usize;
        let mut containers = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let key = u16::from_le_bytes(r.take::<2>()?);
            let card = usize::from(u16::from_le_bytes(r.take::<2>()?)) + 1;
            containers.push((key, card));
        }
        r.at += 4 * n; // the offsets: the containers follow in order
        for (key, card) in containers {
            let base = high | (u64::from(key) << 16);
            out.reserve(card);
            if card <= ARRAY_MAX {
                for _ in 0..card {
                    out.push(base | u64::from(u16::from_le_bytes(r.take::<2>()?)));
                }
            } else {
                for word in 0..1024u64 {
                    let mut bits = u64::from_le_bytes(r.take::<8>()?);
                    // one step per set bit, lowest first
                    while bits != 0 {
                        out.push(base | (word * 64 + u64::from(bits.trailing_zeros())));
                        bits &= bits - 1;
                    }
                }
            }
        }
    }
    Ok(out)
}

fn damaged(reason: &str) -> FormatError {
    FormatError::Corrupt {
        path: "a RECORD_POSITIONS header".into(),
        reason: reason.to_string(),
    }
}

/// Little-endian fields read off a byte string.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let field = self
            .bytes
            .get(self.at..self.at + N)
            .ok_or_else(|| damaged("cut short"))?;
        self.at += N;
        Ok(field.try_into().expect("N bytes"))
    }
}

/// A 32-bit RoaringBitmap of `sorted` in its portable form, without run containers.
fn bitmap_32(sorted: &[u32], out: &mut Vec<u8>) {
    let mut containers: Vec<(u16, Vec<u16>)> = Vec::new();
    for &v in sorted {
        let (key, low) = ((v >> 16) as u16, v as u16);
        match containers.last_mut() {
            Some((k, values)) if *k == key => values.push(low),
            _ => containers.push((key, vec![low])),
        }
    }
    let start = out.len();
    out.extend_from_slice(&COOKIE_NO_RUNS.to_le_bytes());
    out.extend_from_slice(&(containers.len() as u32).to_le_bytes());
    for (key, values) in &containers {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&((values.len() - 1) as u16).to_le_bytes());
    }
    let mut offset = out.len() - start + 4 * containers.len();
    for (_, values) in &containers {
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += container_len(values.len());
    }
    for (_, values) in &containers {
        if values.len() <= ARRAY_MAX {
            values
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        } else {
            let mut words = [0u64; 1024];
            for &v in values {
                words[v as usize / 64] |= 1 << (v % 64);
            }
            words
                .iter()
                .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
        }
    }
}

/// The serialised bytes of a container of `n` values.
fn container_len(n: usize) -> usize {
    match n <= ARRAY_MAX {
        true => 2 * n,
        false => 8192,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header Spark with Hudi 1.2.0 wrote for an upsert of the records at rows 2, 4, 76 and
    /// 149 of a base file (`Roaring64NavigableMap.serializePortable`, then Base64).
    #[test]
    fn positions_are_encoded_as_java_encodes_them() {
        assert_eq!(
            encode_positions(&[2, 4, 76, 149]),
            "AQAAAAAAAAAAAAAAOjAAAAEAAAAAAAMAEAAAAAIABABMAJUA"
        );
    }

    #[test]
    fn containers_past_4096_values_and_past_32_bits() {
        let mut positions: Vec<u64> = (0..5000).map(|i| i * 2).collect();
        positions.push(70_000);
        positions.push((1u64 << 32) + 7);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encode_positions(&positions))
            .unwrap();
        assert_eq!(&bytes[..8], &2u64.to_le_bytes(), "two 32-bit buckets");
        // the first bucket: high 0, cookie, two containers (key 0: 5000 values, a bitmap;
        // key 1: one value)
        assert_eq!(&bytes[8..12], &0u32.to_le_bytes());
        assert_eq!(&bytes[12..16], &COOKIE_NO_RUNS.to_le_bytes());
        assert_eq!(&bytes[16..20], &2u32.to_le_bytes());
        assert_eq!(&bytes[20..24], &[0, 0, 0x87, 0x13]); // key 0, 4999
        assert_eq!(&bytes[24..28], &[1, 0, 0, 0]); // key 1, 0
        let first = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
        assert_eq!(first, 24);
        let second = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
        assert_eq!(second, 24 + 8192);
        // offsets count from the bitmap's start (after the bucket count and high key): bit 0
        // and bit 2 of the bitmap set, bit 1 not
        let start = 12;
        assert_eq!(bytes[start + first] & 0b111, 0b101);
        // 70_000 = (1 << 16) + 4464
        assert_eq!(
            &bytes[start + second..start + second + 2],
            &4464u16.to_le_bytes()
        );
        // the second bucket: high 1, one container holding 7
        let b2 = start + second + 2;
        assert_eq!(&bytes[b2..b2 + 4], &1u32.to_le_bytes());
        assert_eq!(&bytes[bytes.len() - 2..], &7u16.to_le_bytes());
        assert_eq!(
            decode_positions(&encode_positions(&positions)).unwrap(),
            positions
        );
    }

    #[test]
    fn a_damaged_header_is_an_error() {
        let ok = encode_positions(&[1, 2, 3]);
        assert_eq!(decode_positions(&ok).unwrap(), [1, 2, 3]);
        assert!(decode_positions(&ok[..ok.len() - 4]).is_err());
        assert!(decode_positions("not base64!").is_err());
    }
}
