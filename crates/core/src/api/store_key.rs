//! Ordered maps and sets of [`ObjectKey`]s whose comparisons stay inside the map's own nodes.
//!
//! Why: the engine keeps the world in persistent ordered maps (the store, the engine's mirror,
//! every informer cache, the work queues). Comparing two `ObjectKey`s follows one heap pointer
//! per field (resource, namespace, name; the group too when it is not empty), so a lookup in a
//! map of 10,000 objects read dozens of cold cache lines that held nothing but key strings, and
//! the same change cost more per event in a large world than in a small one although it ran the
//! same instructions. A [`SortKey`] carries an order-preserving byte encoding of the key inline
//! (on the heap only past [`INLINE`] bytes, or when a field holds a NUL byte), so a comparison
//! is one `memcmp` over memory the map node already holds.
//!
//! The encoding orders exactly as `ObjectKey`'s derived `Ord` (group, resource, namespace,
//! name, each compared as bytes), so every iteration order, and with it every trace, is
//! unchanged. Each of the first three fields is written with `0x00` escaped as `0x00 0xFF` and
//! ended by `0x00 0x01`; the name is written escaped, unterminated. A field that is a proper
//! prefix of another then ends with `0x00 0x01`, which sorts below both an escaped `0x00`
//! (`0x00 0xFF`) and any other byte, as a shorter string sorts first.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use super::types::{GroupResource, ObjectKey};

/// Encodings up to this many bytes live inside the key (a Pod key in the core group with a
/// generated name is about 40).
pub const INLINE: usize = 46;

/// An order-preserving encoding of (a prefix of) an [`ObjectKey`].
#[derive(Clone)]
enum Encoded {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Encoded {
    fn as_bytes(&self) -> &[u8] {
        match self {
            Encoded::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Encoded::Heap(b) => b,
        }
    }

    /// The encoding of `fields`, each but the last terminated (the last too with
    /// `terminate_last`).
    fn of(fields: &[&str], terminate_last: bool) -> Encoded {
        let terminated = |i: usize| terminate_last || i + 1 < fields.len();
        let len: usize = fields.iter().map(|f| f.len() + 2).sum();
        // Names in kube never hold NUL, so the usual key needs no escapes: copy the fields.
        if len <= INLINE && fields.iter().all(|f| !f.as_bytes().contains(&0)) {
            let mut bytes = [0u8; INLINE];
            let mut at = 0;
            for (i, f) in fields.iter().enumerate() {
                bytes[at..at + f.len()].copy_from_slice(f.as_bytes());
                at += f.len();
                if terminated(i) {
                    bytes[at..at + 2].copy_from_slice(&[0x00, 0x01]);
                    at += 2;
                }
            }
            // `at <= len <= INLINE`, so it fits in a u8.
            return Encoded::Inline {
                len: at as u8,
                bytes,
            };
        }
        let mut v = Vec::with_capacity(len + 8);
        for (i, f) in fields.iter().enumerate() {
            for b in f.bytes() {
                v.push(b);
                if b == 0 {
                    v.push(0xFF);
                }
            }
            if terminated(i) {
                v.extend_from_slice(&[0x00, 0x01]);
            }
        }
        Encoded::Heap(v.into_boxed_slice())
    }
}

/// A lookup probe for `key`: its encoding, built on the stack for keys that fit.
fn probe(key: &ObjectKey) -> Encoded {
    Encoded::of(
        &[&key.gr.group, &key.gr.resource, &key.namespace, &key.name],
        false,
    )
}

/// The encoded prefix every key of `gr` (and, with `Some`, of that namespace) starts with.
fn prefix(gr: &GroupResource, namespace: Option<&str>) -> Encoded {
    match namespace {
        Some(ns) => Encoded::of(&[&gr.group, &gr.resource, ns], true),
        None => Encoded::of(&[&gr.group, &gr.resource], true),
    }
}

/// An [`ObjectKey`] that orders by its inline encoding; the key itself is shared.
#[derive(Clone)]
pub struct SortKey {
    encoded: Encoded,
    key: Arc<ObjectKey>,
}

impl SortKey {
    pub fn new(key: ObjectKey) -> Self {
        Self::shared(Arc::new(key))
    }

    pub fn shared(key: Arc<ObjectKey>) -> Self {
        SortKey {
            encoded: probe(&key),
            key,
        }
    }

    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    pub fn arc(&self) -> &Arc<ObjectKey> {
        &self.key
    }
}

impl Borrow<[u8]> for SortKey {
    fn borrow(&self) -> &[u8] {
        self.encoded.as_bytes()
    }
}

impl PartialEq for SortKey {
    fn eq(&self, other: &Self) -> bool {
        self.encoded.as_bytes() == other.encoded.as_bytes()
    }
}

impl Eq for SortKey {}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.encoded.as_bytes().cmp(other.encoded.as_bytes())
    }
}

impl fmt::Debug for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.key.fmt(f)
    }
}

/// A persistent ordered map from [`ObjectKey`], iterated in `ObjectKey` order.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyMap<V: Clone> {
    map: OrdMap<SortKey, V>,
}

impl<V: Clone> Default for KeyMap<V> {
    fn default() -> Self {
        KeyMap { map: OrdMap::new() }
    }
}

impl<V: Clone + fmt::Debug> fmt::Debug for KeyMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: Clone> KeyMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&V> {
        self.map.get(probe(key).as_bytes())
    }

    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut V> {
        self.map.get_mut(probe(key).as_bytes())
    }

    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.get(key).is_some()
    }

    /// The entry's key as stored (cheap to clone) and its value.
    pub fn get_key_value(&self, key: &ObjectKey) -> Option<(&SortKey, &V)> {
        self.map.get_key_value(probe(key).as_bytes())
    }

    /// The value for `key`, inserting `V::default()` first if there is none.
    pub fn get_or_insert_default(&mut self, key: &ObjectKey) -> &mut V
    where
        V: Default,
    {
        self.map.entry(SortKey::new(key.clone())).or_default()
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: ObjectKey, value: V) -> Option<V> {
        self.map.insert(SortKey::new(key), value)
    }

    /// [`Self::insert`] under a key already encoded.
    pub fn insert_sorted(&mut self, key: SortKey, value: V) -> Option<V> {
        self.map.insert(key, value)
    }

    /// [`Self::insert`] of a key already shared (no copy of its strings).
    pub fn insert_shared(&mut self, key: Arc<ObjectKey>, value: V) -> Option<V> {
        self.map.insert(SortKey::shared(key), value)
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<V> {
        self.map.remove(probe(key).as_bytes())
    }

    /// Every entry, in `ObjectKey` order.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &V)> {
        self.map.iter().map(|(k, v)| (k.key(), v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.map.keys().map(SortKey::key)
    }

    /// Entries of one resource, in one namespace (`Some`) or all (`None`), in key order: a
    /// range scan, never a full scan.
    pub fn range(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> impl Iterator<Item = (&ObjectKey, &V)> {
        let start = prefix(gr, namespace);
        self.map
            .range::<_, [u8]>((
                std::ops::Bound::Included(start.as_bytes()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(k, _)| k.encoded.as_bytes().starts_with(start.as_bytes()))
            .map(|(k, v)| (k.key(), v))
    }
}

/// A persistent ordered set of [`ObjectKey`]s, iterated in `ObjectKey` order.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeySet {
    set: OrdSet<SortKey>,
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl KeySet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.set.contains(probe(key).as_bytes())
    }

    /// Adds `key`; returns whether it was new.
    pub fn insert(&mut self, key: ObjectKey) -> bool {
        self.set.insert(SortKey::new(key)).is_none()
    }

    /// [`Self::insert`] of a key already shared.
    pub fn insert_shared(&mut self, key: Arc<ObjectKey>) -> bool {
        self.set.insert(SortKey::shared(key)).is_none()
    }

    /// Removes `key`; returns whether it was there.
    pub fn remove(&mut self, key: &ObjectKey) -> bool {
        self.set.remove(probe(key).as_bytes()).is_some()
    }

    pub fn iter(&self) -> impl Iterator<Item = &ObjectKey> {
        self.set.iter().map(SortKey::key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn key(group: &str, resource: &str, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey::new(GroupResource::new(group, resource), namespace, name)
    }

    /// Short strings over bytes that stress the encoding: NUL, its escape and terminator
    /// bytes, a multi-byte character, and ordinary letters; sometimes long enough to spill to
    /// the heap.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::collection::vec(
                prop::sample::select(vec!['\0', '\u{1}', 'a', 'b', '\u{ff}', '-']),
                0..4
            )
            .prop_map(|c| c.into_iter().collect::<String>()),
            1 => "[a-c]{20,40}",
        ]
    }

    fn object_key() -> impl Strategy<Value = ObjectKey> {
        (field(), field(), field(), field()).prop_map(|(g, r, ns, n)| key(&g, &r, &ns, &n))
    }

    proptest! {
        #[test]
        fn sort_keys_order_and_compare_exactly_as_object_keys(a in object_key(), b in object_key()) {
            let (sa, sb) = (SortKey::new(a.clone()), SortKey::new(b.clone()));
            prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
            prop_assert_eq!(sa == sb, a == b);
        }

        #[test]
        fn a_key_map_iterates_finds_and_ranges_like_an_ordered_map_of_object_keys(
            keys in prop::collection::vec(object_key(), 0..40),
            removed in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
            probe in object_key(),
        ) {
            let mut ours = KeyMap::new();
            let mut model = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                prop_assert_eq!(ours.insert(k.clone(), i), model.insert(k.clone(), i));
            }
            for ix in &removed {
                if keys.is_empty() {
                    break;
                }
                let k = &keys[ix.index(keys.len())];
                prop_assert_eq!(ours.remove(k), model.remove(k));
            }
            let listed: Vec<(&ObjectKey, &usize)> = ours.iter().collect();
            let expected: Vec<(&ObjectKey, &usize)> = model.iter().collect();
            prop_assert_eq!(listed, expected);
            prop_assert_eq!(ours.get(&probe), model.get(&probe));
            for ns in [None, Some(probe.namespace.as_str())] {
                let ranged: Vec<&ObjectKey> = ours.range(&probe.gr, ns).map(|(k, _)| k).collect();
                let filtered: Vec<&ObjectKey> = model
                    .keys()
                    .filter(|k| k.gr == probe.gr && ns.is_none_or(|ns| k.namespace == ns))
                    .collect();
                prop_assert_eq!(ranged, filtered);
            }
        }
    }

    #[test]
    fn a_resource_range_stops_at_the_next_resource_and_namespace() {
        let mut m = KeyMap::new();
        for (res, ns, name) in [
            ("pods", "a", "p1"),
            ("pods", "a\0", "p0"),
            ("pods", "ab", "p2"),
            ("pods", "b", "p3"),
            ("podsx", "a", "q"),
            ("pod", "a", "r"),
        ] {
            m.insert(key("", res, ns, name), ());
        }
        let pods = GroupResource::new("", "pods");
        let names =
            |ns| -> Vec<String> { m.range(&pods, ns).map(|(k, _)| k.name.clone()).collect() };
        assert_eq!(names(Some("a")), ["p1"]);
        assert_eq!(names(None), ["p1", "p0", "p2", "p3"]);
    }

    #[test]
    fn pod_keys_with_generated_names_are_stored_inline() {
        let k = key("", "pods", "default", "web-5cc4fd5dc8-abcde");
        assert!(matches!(SortKey::new(k).encoded, Encoded::Inline { .. }));
        let long = key("example.com", "databases", "default", &"x".repeat(60));
        assert!(matches!(SortKey::new(long).encoded, Encoded::Heap(_)));
    }
}
