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

/// Reads the items of an Avro array or map: blocks of `count` items until a 0 count (a
/// negative count is followed by the block's byte size).
pub(crate) fn read_blocks(
    buf: &mut &[u8],
    mut item: impl FnMut(&mut &[u8]) -> Option<()>,
) -> Option<()> {
    loop {
        let mut n = read_long(buf)?;
        if n == 0 {
            return Some(());
        }
        if n < 0 {
            n = n.checked_neg()?;
            read_long(buf)?;
        }
        // a count no buffer can hold is corrupt (items of Avro's `null` type take no bytes, so
        // the bytes left alone do not bound it)
        if n as u64 > buf.len() as u64 + 4096 {
            return None;
        }
        for _ in 0..n {
            item(buf)?;
        }
    }
}

/// A big-endian two's complement integer of at most 16 bytes (an Avro decimal's unscaled value).
pub(crate) fn be_to_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.len() > 16 {
        return None;
    }
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(full))
}

#[cfg(test)]
mod tests;
