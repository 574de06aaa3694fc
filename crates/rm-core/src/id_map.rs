//! Lookup maps for the hot paths, keyed by ids (numbers): an application, a container, a
//! scheduler container or node. At seed 003's scale the RM holds ~1.2M live containers and
//! 10,000+ apps; an ordered map of that size costs a root-to-leaf walk of cache misses per
//! lookup and shifts its leaves' values on every insert and remove, once per allocation,
//! status and completion. These are hash maps with a fixed hasher instead: one probe, and the
//! same layout from run to run (no per-process seed), so the core stays deterministic.
//!
//! The core's rule is that nothing it outputs follows a hash order, so this is the only module
//! allowed to name a hash map (`tests/tidy.rs`), and an [`IdMap`] hands out its entries in no
//! order only through methods named `unordered` (for folds and updates whose result does not
//! depend on the order); what is reported or turned into outputs iterates an ordered index
//! kept beside the map where it is needed ([`crate::core::AppTable`],
//! [`crate::core::ContainerTable`]) or sorts at the (rare) site.
//!
//! Keys come from the core's own counters, or from a node's registration only for containers
//! the scheduler accepted back onto that node (bounded by its capacity), so a remote party
//! cannot fill one bucket; the hasher need not resist collisions chosen by an attacker.
//!
//! One map is keyed by names a remote party chooses: [`NameMap`], the node ids NMs register
//! with and name in every heartbeat. It hashes with SipHash-1-3 under a key derived from the
//! RM's secret (the driver's entropy, as its tokens), so ids chosen to collide cannot be
//! found without that secret. Its order is never shown (no iteration at all): the node
//! table keeps an ordered index beside it for reports.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};

use siphasher::sip::SipHasher13;

/// The multiplicative hash of rustc's `FxHasher`: each word is folded in with a rotate, an
/// xor and a multiply by an odd constant; `finish` rotates so the multiply's well-mixed high
/// bits also reach the low bits that pick the bucket.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// A map for lookups by id (see the module's note on order).
pub(crate) struct IdMap<K, V> {
    map: HashMap<K, V, BuildHasherDefault<IdHasher>>,
    /// The capacity `insert_fresh` last reserved (see there).
    room: usize,
}

impl<K, V> Default for IdMap<K, V> {
    fn default() -> Self {
        IdMap {
            map: HashMap::default(),
            room: 0,
        }
    }
}

impl<K: Hash + Eq, V> IdMap<K, V> {
    #[inline]
    pub(crate) fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.map.get(key)
    }

    #[inline]
    pub(crate) fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.map.get_mut(key)
    }

    #[inline]
    pub(crate) fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.map.contains_key(key)
    }

    #[inline]
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.map.insert(key, value)
    }

    /// Inserts under a key that is always new (an id from a counter, removed once when it
    /// ends), keeping the table at most half full of live entries. Why: removing a key can
    /// leave a tombstone, and a table near its load limit runs out of room to them and then
    /// rehashes or regrows all its entries in one call. A replay of the scheduler's container
    /// ids at seed 003's scale (1.2M live, 30,000 new a second, each living 40 s) in a table
    /// grown only as it filled regrew ~2 minutes after the fill (~0.2 s in one insert, after
    /// a minute of slowing probes); half full at most, the table kept its room through 15
    /// minutes of the same churn (stop 36).
    #[inline]
    pub(crate) fn insert_fresh(&mut self, key: K, value: V) -> Option<V> {
        if self.map.len() * 2 >= self.room {
            self.map.reserve(self.map.len().max(16));
            self.room = self.map.capacity();
        }
        self.map.insert(key, value)
    }

    #[inline]
    pub(crate) fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.map.remove(key)
    }

    /// The value under `key`, inserting `make()` first when there is none.
    #[inline]
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        self.map.entry(key).or_insert_with(make)
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Every value, in no particular order: only for updates whose effect does not depend on
    /// the order.
    pub(crate) fn values_mut_unordered(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut()
    }

    /// Every key, in no particular order: callers sort before anything order-dependent.
    pub(crate) fn keys_unordered(&self) -> impl Iterator<Item = &K> {
        self.map.keys()
    }
}

/// SipHash-1-3 under a secret key: for keys a remote party chooses.
#[derive(Clone, Copy)]
struct KeyedSip {
    k0: u64,
    k1: u64,
}

impl BuildHasher for KeyedSip {
    type Hasher = SipHasher13;

    #[inline]
    fn build_hasher(&self) -> SipHasher13 {
        SipHasher13::new_with_keys(self.k0, self.k1)
    }
}

/// A map from names a remote party chooses (node ids) to values, found in one probe: an
/// ordered map of strings costs a walk of string comparisons, each reading another heap
/// block, on every heartbeat. Keyed (see the module's note); never iterated.
pub(crate) struct NameMap<V> {
    map: HashMap<Box<str>, V, KeyedSip>,
}

impl<V> NameMap<V> {
    /// A map hashing under `key` (derive it from a secret: `weft_tokens::derive_key`).
    pub(crate) fn new(key: [u8; 32]) -> NameMap<V> {
        let word = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&key[i * 8..i * 8 + 8]);
            u64::from_le_bytes(bytes)
        };
        NameMap {
            map: HashMap::with_hasher(KeyedSip {
                k0: word(0),
                k1: word(1),
            }),
        }
    }

    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        self.map.get(name)
    }

    pub(crate) fn insert(&mut self, name: &str, value: V) -> Option<V> {
        self.map.insert(name.into(), value)
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_map_finds_what_it_holds_and_its_hash_depends_on_the_key() {
        let mut m: NameMap<u32> = NameMap::new([7; 32]);
        assert!(m.insert("n1:45454", 1).is_none());
        assert_eq!(m.insert("n1:45454", 2), Some(1));
        m.insert("n2:45454", 3);
        assert_eq!(
            (m.get("n1:45454"), m.get("n2:45454"), m.get("n3:1")),
            (Some(&2), Some(&3), None)
        );
        assert_eq!(m.len(), 2);
        let hash = |key: [u8; 32]| NameMap::<u32>::new(key).map.hasher().hash_one("n1:45454");
        assert_eq!(hash([7; 32]), hash([7; 32]));
        assert_ne!(hash([7; 32]), hash([8; 32]));
    }

    #[test]
    fn the_hash_of_a_key_is_the_same_in_every_process() {
        // No per-process seed: the layout, and so any order the map would show, repeats.
        let hash = |k: (u64, u32)| {
            let mut h = IdHasher::default();
            k.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash((7, 1)), hash((7, 1)));
        assert_ne!(hash((7, 1)), hash((7, 2)));
        assert_ne!(hash((7, 1)), hash((8, 1)));
    }

    #[test]
    fn sequential_ids_spread_over_the_buckets_picked_by_the_low_bits() {
        // hashbrown picks the bucket from the low bits: dense ids must not collide there.
        let buckets: std::collections::BTreeSet<u64> = (0..1024u64)
            .map(|seq| {
                let mut h = IdHasher::default();
                h.write_u64(1_700_000_000_000);
                h.write_u64(seq);
                h.finish() & 1023
            })
            .collect();
        assert!(buckets.len() > 600, "{} of 1024 buckets", buckets.len());
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: IdMap<u64, &str> = IdMap::default();
        assert!(m.insert(3, "c").is_none());
        assert_eq!(m.insert(3, "d"), Some("c"));
        *m.get_or_insert_with(4, || "e") = "f";
        assert_eq!((m.get(&3), m.get(&4), m.len()), (Some(&"d"), Some(&"f"), 2));
        assert_eq!(m.remove(&3), Some("d"));
        assert!(!m.contains_key(&3) && m.contains_key(&4));
        let mut keys: Vec<u64> = m.keys_unordered().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, vec![4]);
    }

    /// Churn at a steady live count, as the scheduler's container ids: `live` ids, each
    /// replaced by a fresh one, removed in a shuffled order (containers end out of order).
    /// Returns the table's capacity (live entries plus room left: tombstones take room)
    /// after the fill and after the churn.
    fn churn(live: u64, rounds: u64, fresh: bool) -> (usize, usize) {
        let mut m: IdMap<u64, u64> = IdMap::default();
        let insert = |m: &mut IdMap<u64, u64>, k: u64| {
            if fresh {
                m.insert_fresh(k, k);
            } else {
                m.insert(k, k);
            }
        };
        let mut alive: Vec<u64> = (0..live).collect();
        for &k in &alive {
            insert(&mut m, k);
        }
        let filled = m.map.capacity();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for next in live..live + rounds * live {
            // xorshift: a fixed sequence of picks.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let gone = alive.swap_remove((x % live) as usize);
            assert_eq!(m.remove(&gone), Some(gone));
            insert(&mut m, next);
            alive.push(next);
        }
        assert_eq!(m.len(), live as usize);
        (filled, m.map.capacity())
    }

    #[test]
    fn fresh_keys_keep_the_tables_room_under_churn() {
        // 70,000 live ids fill a plain table to 61% of its capacity, as ~1.2M containers do
        // at full scale (65%); plain inserts regrow it within this churn (stop 36's probe).
        let (filled, churned) = churn(70_000, 20, true);
        assert!(
            churned <= filled && churned * 10 >= filled * 9,
            "capacity {filled} after the fill, {churned} after the churn: regrown, or room lost to tombstones"
        );
    }
}
