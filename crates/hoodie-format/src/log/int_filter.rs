//! A bit filter over a slice's logged integer keys, so that the merge passes most base rows
//! (those no log changes) by a bit test instead of a hash probe.

use crate::tasks::FastMap;

/// The logged integer keys as bits: most base rows of a slice have no logged change, and a bit
/// test tells them apart faster than a hash probe.
pub(super) enum IntFilter {
    /// One bit a value of the keys' range: exact.
    Range { min: i64, bits: Vec<u64> },
    /// Keys spread too widely for that (random ids): one bit a hash of a key, in 16 bits a key
    /// (about 6% of the keys not logged pass).
    Hashed { shift: u32, bits: Vec<u64> },
}

/// Multiplier of the hashed filter (Fibonacci hashing: the top bits of the product).
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

impl IntFilter {
    /// The filter of `keys`: over their range when it takes at most 64 bytes a key, hashed
    /// otherwise; `None` for no keys.
    pub(super) fn of<V>(keys: &FastMap<i64, V>) -> Option<Self> {
        let min = *keys.keys().min()?;
        let max = *keys.keys().max()?;
        let span = (max as i128 - min as i128) as u128 + 1;
        let words = span.div_ceil(64);
        if words <= (keys.len() as u128 * 8).max(1024) {
            let mut bits = vec![0u64; words as usize];
            for &k in keys.keys() {
                let at = k.abs_diff(min);
                bits[(at / 64) as usize] |= 1 << (at % 64);
            }
            return Some(Self::Range { min, bits });
        }
        let width = (keys.len() as u64 * 16).next_power_of_two().max(64);
        let shift = 64 - width.trailing_zeros();
        let mut bits = vec![0u64; (width / 64) as usize];
        for &k in keys.keys() {
            let at = Self::hashed(k, shift);
            bits[at / 64] |= 1 << (at % 64);
        }
        Some(Self::Hashed { shift, bits })
    }

    /// Bytes held.
    pub(super) fn size(&self) -> usize {
        match self {
            Self::Range { bits, .. } | Self::Hashed { bits, .. } => bits.len() * 8,
        }
    }

    fn hashed(k: i64, shift: u32) -> usize {
        ((k as u64).wrapping_mul(SPREAD) >> shift) as usize
    }

    pub(super) fn may_hold(&self, k: i64) -> bool {
        match self {
            Self::Range { min, bits } => {
                if k < *min {
                    return false;
                }
                let at = k.abs_diff(*min);
                bits.get((at / 64) as usize)
                    .is_some_and(|w| w & (1 << (at % 64)) != 0)
            }
            Self::Hashed { shift, bits } => {
                let at = Self::hashed(k, *shift);
                bits[at / 64] & (1 << (at % 64)) != 0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(keys: &[i64]) -> FastMap<i64, u32> {
        keys.iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect()
    }

    #[test]
    fn the_integer_key_filter_holds_every_logged_key_and_rejects_the_rest() {
        let keys = [-70, -1, 0, 63, 64, 5000];
        let f = IntFilter::of(&index(&keys)).expect("a narrow range gets a filter");
        for k in keys {
            assert!(f.may_hold(k), "{k}");
        }
        for k in [i64::MIN, -71, -69, 1, 62, 65, 4999, 5001, i64::MAX] {
            assert!(!f.may_hold(k), "{k}");
        }
    }

    #[test]
    fn keys_spread_too_wide_for_their_range_get_a_hashed_filter() {
        assert!(IntFilter::of(&index(&[])).is_none());
        for keys in [vec![i64::MIN, i64::MAX], vec![0, 10_000_000]] {
            let f = IntFilter::of(&index(&keys)).unwrap();
            assert!(matches!(f, IntFilter::Hashed { .. }));
            assert!(keys.iter().all(|&k| f.may_hold(k)));
        }
        // random-looking ids, as a benchmark's: every logged key passes, few others do
        let id = |i: i64| i.wrapping_mul(0x5851_F42D_4C95_7F2D) >> 24;
        let logged: Vec<i64> = (0..50_000).map(id).collect();
        let f = IntFilter::of(&index(&logged)).unwrap();
        assert!(matches!(f, IntFilter::Hashed { .. }));
        assert!(logged.iter().all(|&k| f.may_hold(k)));
        let passed = (50_000..550_000).filter(|&i| f.may_hold(id(i))).count();
        assert!(
            passed < 500_000 / 10,
            "{passed} of 500000 keys not logged pass"
        );
    }
}
