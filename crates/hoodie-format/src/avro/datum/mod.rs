//! Avro binary datums (no container) to and from Arrow columns: the records of a log file's
//! AVRO_DATA blocks. The schema of each side is the table's Arrow schema and the block's Avro
//! writer schema (its SCHEMA header), as Hudi writes it: nullable fields are
//! `["null", T]` unions, decimals `fixed`, timestamps `timestamp-micros`.

mod decode;
mod encode;
mod schema;

pub use decode::RowDecoder;
pub use encode::RowEncoder;

/// Appends `n` as an Avro `long` (zig-zag, then base-128 little-endian groups).
pub(crate) fn write_long(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Reads an Avro `long` (or `int`) from the front of `buf`.
pub(crate) fn read_long(buf: &mut &[u8]) -> Option<i64> {
    let mut z: u64 = 0;
    let mut shift = 0u32;
    loop {
        let (&b, rest) = buf.split_first()?;
        *buf = rest;
        if shift >= 64 {
            return None;
        }
        z |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    Some(((z >> 1) as i64) ^ -((z & 1) as i64))
}

/// Takes `n` bytes from the front of `buf`.
pub(crate) fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Some(head)
}

/// Reads a length-prefixed byte string (Avro `bytes` and `string`).
pub(crate) fn read_bytes<'a>(buf: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = read_long(buf)?;
    take(buf, usize::try_from(n).ok()?)
}

#[cfg(test)]
mod tests;
