//! FNV-1a, the project's one stable hash: a few lines with no dependency, and fixed forever,
//! unlike std's hasher, whose output may change between Rust releases and whose SipHash
//! costs more than short ids and page states need. Nothing here resists input chosen to
//! collide: it hashes Tandem's own ids, names and page fingerprints.

use std::hash::{BuildHasherDefault, Hasher};

const OFFSET_64: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME_64: u64 = 0x0100_0000_01b3;
const OFFSET_32: u32 = 0x811c_9dc5;
const PRIME_32: u32 = 0x0100_0193;

/// The 64-bit FNV-1a of `bytes`.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes
        .into_iter()
        .fold(OFFSET_64, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME_64))
}

/// The 32-bit FNV-1a of `bytes` (tool names carry it: it must never change).
pub fn fnv1a_32(bytes: impl IntoIterator<Item = u8>) -> u32 {
    bytes
        .into_iter()
        .fold(OFFSET_32, |h, b| (h ^ u32::from(b)).wrapping_mul(PRIME_32))
}

/// [`fnv1a`] as a `Hasher`, for maps keyed by Tandem's own ids.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(OFFSET_64)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME_64);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`Fnv1a`] hashers for a `HashMap`.
pub type BuildFnv1a = BuildHasherDefault<Fnv1a>;

/// The hasher of maps keyed by what a page or a model wrote: std's, keyed at random for each
/// process, so a page cannot choose keys that collide. Except in fuzz builds (`cfg(fuzzing)`,
/// set by cargo fuzz): there one fixed key, or the code a run covers would differ from run to
/// run, and with it what libFuzzer tries from a fixed seed (`scripts/fuzz --gate` must give
/// the same verdict on every machine).
#[cfg(not(fuzzing))]
pub type PageKeys = std::collections::hash_map::RandomState;
#[cfg(fuzzing)]
pub type PageKeys = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

/// A `HashMap` with [`PageKeys`] (made with `default()`).
pub type HashMap<K, V> = std::collections::HashMap<K, V, PageKeys>;

/// A `HashSet` with [`PageKeys`] (made with `default()`).
pub type HashSet<T> = std::collections::HashSet<T, PageKeys>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_test_vectors() {
        assert_eq!(fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(*b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a_32(*b"a"), 0xe40c_292c);
        assert_eq!(fnv1a_32(*b"foobar"), 0xbf9c_f968);
        let mut h = Fnv1a::default();
        h.write(b"foo");
        h.write(b"bar");
        assert_eq!(h.finish(), fnv1a(*b"foobar"));
    }
}
