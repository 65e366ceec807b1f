//! A JSON object: members in insertion order, shared between copies until one is written.
//!
//! `serde_json::Map` with `preserve_order` is an `IndexMap`: 112 bytes an entry, a hash table
//! beside them, owned `String` keys, and a deep copy on every clone. Objects here are small (a
//! Pod's largest map has about 15 members) and copied far more often than they are searched
//! (every write copies the stored version, every informer and old version keeps one), so a map
//! is a reference-counted pair of vectors, keys and values, searched linearly: a clone is a
//! count, a write copies the one level it changes (copy on write), and keys of up to 24 bytes
//! are stored inline.
//!
//! Once a map is stored ([`Map::compact`]) it is one allocation: its count, a pointer to its
//! keys and its values together (`triomphe::ThinArc`), where a map being built is a count
//! beside two vectors. Its keys are an array that the same level of other
//! stored objects with the same keys shares ([`Map::compact_like`]): every Pod of a ReplicaSet,
//! every Event, every version of an object has the same keys at each level, so a stored member
//! takes its value's 24 bytes, not 48. A write of a value keeps the keys shared; adding or
//! removing a member gives the map its own keys again. A map stored with nothing to compare
//! with takes the array last made for the same keys, and a stored map is searched by a word
//! per key (its length and first bytes) before any text is read.
//!
//! Every method answers as `serde_json::Map`'s with `preserve_order` does, order included:
//! `insert` of a present key keeps its place, `remove` is a swap remove, and equality ignores
//! order.

use super::Value;
use compact_str::CompactString;
use std::fmt;
use std::sync::Arc;
use triomphe::ThinArc;

/// An object's key.
pub type Key = CompactString;

/// A map's keys: its own while it is built, an array shared with other stored maps once stored.
#[derive(Clone)]
enum Keys {
    Own(Vec<Key>),
    Shared(Arc<SharedKeys>),
}

/// A stored map's keys, and beside each its [`head`]: a search compares one word a key, and
/// reads a key's text only when its head is the one searched for and the text is longer than
/// a head holds. Readers search stored objects far more than anything else (every controller
/// reads the same few members of every object it is told about), and about one search in five
/// is for a member the object does not have, which looks at every key.
struct SharedKeys {
    heads: Box<[u64]>,
    keys: Box<[Key]>,
}

impl SharedKeys {
    /// Where `key` (whose head `head_of_key` gives) is, by heads first.
    #[inline(always)]
    fn search(&self, key: &[u8], head_of_key: impl FnOnce() -> u64) -> Option<usize> {
        let h = head_of_key();
        if key.len() < 8 {
            self.heads.iter().position(|&x| x == h)
        } else {
            (self.heads.iter().zip(self.keys.iter()))
                .position(|(&x, k)| x == h && same_bytes(k.as_bytes(), key))
        }
    }

    /// The array for `keys`: the one made last for the same keys in the same order if it is
    /// still at hand, else a new one. A map compared with nothing, or with an object whose keys
    /// differ (a Pod's first status, its spec after defaulting), would otherwise make an array
    /// of its own: about four for every Pod.
    fn shared(keys: Vec<Key>) -> Arc<SharedKeys> {
        const SLOTS: usize = 256;
        std::thread_local! {
            /// The last array made for each slot (slots chosen by the heads): a few hundred
            /// arrays at most, kept alive here, none of which a reader can tell from another.
            static RECENT: std::cell::RefCell<[Option<Arc<SharedKeys>>; SLOTS]> =
                const { std::cell::RefCell::new([const { None }; SLOTS]) };
        }
        let heads: Box<[u64]> = keys.iter().map(|k| head(k.as_bytes())).collect();
        let hash = heads.iter().fold(heads.len() as u64, |h, &x| {
            (h.rotate_left(5) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        });
        let slot = (hash >> 56) as usize % SLOTS;
        RECENT.with(|recent| {
            let mut recent = recent.borrow_mut();
            if let Some(a) = &recent[slot] {
                if a.heads == heads && *a.keys == *keys {
                    return Arc::clone(a);
                }
            }
            let a = Arc::new(SharedKeys {
                heads,
                keys: keys.into_boxed_slice(),
            });
            recent[slot] = Some(Arc::clone(&a));
            a
        })
    }
}

/// A key's length (up to 255) in the top byte and its first seven bytes below: keys with other
/// heads differ, and keys of up to seven bytes with the same head are the same. Read as
/// [`same_bytes`] reads, in words, the short ones in two overlapping halves.
#[inline]
fn head(s: &[u8]) -> u64 {
    let n = s.len();
    let text = if n >= 8 {
        u64::from_le_bytes(word(s, 0)) & 0x00ff_ffff_ffff_ffff
    } else if n >= 4 {
        let (lo, hi) = (
            u32::from_le_bytes(word(s, 0)),
            u32::from_le_bytes(word(s, n - 4)),
        );
        u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
    } else if n >= 2 {
        let (lo, hi) = (
            u16::from_le_bytes(word(s, 0)),
            u16::from_le_bytes(word(s, n - 2)),
        );
        u64::from(lo) | (u64::from(hi) << (8 * (n - 2)))
    } else {
        s.first().map_or(0, |&b| u64::from(b))
    };
    text | ((n.min(255) as u64) << 56)
}

/// [`head`] at compile time, a byte at a time: the first seven bytes in order from the lowest,
/// which is what `head`'s overlapping words come to.
pub(super) const fn head_of(s: &[u8]) -> u64 {
    let n = s.len();
    let mut text = 0;
    let mut i = 0;
    while i < n && i < 7 {
        text |= (s[i] as u64) << (8 * i);
        i += 1;
    }
    let len = if n > 255 { 255 } else { n as u64 };
    text | (len << 56)
}

impl Keys {
    #[inline]
    fn as_slice(&self) -> &[Key] {
        match self {
            Keys::Own(v) => v,
            Keys::Shared(a) => &a.keys,
        }
    }

    /// The keys to change, copied out of the shared array first.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn own(&mut self) -> &mut Vec<Key> {
        if let Keys::Shared(a) = self {
            *self = Keys::Own(a.keys.to_vec());
        }
        match self {
            Keys::Own(v) => v,
            Keys::Shared(_) => unreachable!("the keys were just copied out"),
        }
    }
}

/// A map's members: the keys, and the values at the same places.
#[derive(Clone)]
struct Entries {
    keys: Keys,
    values: Vec<Value>,
}

impl Default for Entries {
    fn default() -> Self {
        Entries {
            keys: Keys::Own(Vec::new()),
            values: Vec::new(),
        }
    }
}

impl Entries {
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn position(&self, key: &str) -> Option<usize> {
        self.search(key.as_bytes(), || head(key.as_bytes()))
    }

    /// [`Entries::position`] of a key whose head is known.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn position_by_head(&self, key: &str, h: u64) -> Option<usize> {
        self.search(key.as_bytes(), || h)
    }

    /// The search: a map being built compares texts, a stored map heads ([`SharedKeys`]).
    #[inline(always)]
    fn search(&self, key: &[u8], head_of_key: impl FnOnce() -> u64) -> Option<usize> {
        match &self.keys {
            Keys::Own(keys) => keys.iter().position(|k| same_bytes(k.as_bytes(), key)),
            Keys::Shared(shared) => shared.search(key, head_of_key),
        }
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn push(&mut self, key: Key, value: Value) {
        self.keys.own().push(key);
        self.values.push(value);
    }

    fn swap_remove(&mut self, i: usize) -> (Key, Value) {
        (self.keys.own().swap_remove(i), self.values.swap_remove(i))
    }
}

/// A JSON object (see the module's text).
#[derive(Clone)]
pub struct Map {
    repr: Repr,
}

/// A map's two forms. A stored map ([`Map::compact`]) is one allocation: its count, a pointer
/// to its shared keys and its values together (a `triomphe::ThinArc`), where a map being built
/// is a count and two vectors (`Arc<Entries>`, whose values are a second allocation). At
/// 10,000 Pods some 337,000 levels are stored; one allocation each took the peak RSS from
/// 218.0 to 203.5 MB (BENCHMARKS.md, "Session 32").
#[derive(Clone)]
enum Repr {
    /// Being built, or written since it was stored.
    Own(Arc<Entries>),
    /// Stored: read only; a write copies the values out into [`Repr::Own`], the keys staying
    /// shared.
    Stored(ThinArc<Arc<SharedKeys>, Value>),
}

impl Default for Map {
    fn default() -> Self {
        Map {
            repr: Repr::Own(Arc::default()),
        }
    }
}

impl Map {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Self {
        Map {
            repr: Repr::Own(Arc::new(Entries {
                keys: Keys::Own(Vec::with_capacity(n)),
                values: Vec::with_capacity(n),
            })),
        }
    }

    pub fn len(&self) -> usize {
        self.values_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.values_slice().is_empty()
    }

    /// Whether two maps are the same allocation (so equal without looking).
    pub fn ptr_eq(a: &Map, b: &Map) -> bool {
        match (&a.repr, &b.repr) {
            (Repr::Own(x), Repr::Own(y)) => Arc::ptr_eq(x, y),
            (Repr::Stored(x), Repr::Stored(y)) => x.ptr() == y.ptr(),
            _ => false,
        }
    }

    /// The values, in order.
    #[inline]
    fn values_slice(&self) -> &[Value] {
        match &self.repr {
            Repr::Own(e) => &e.values,
            Repr::Stored(t) => &t.slice,
        }
    }

    /// The keys, in order.
    #[inline]
    fn keys_slice(&self) -> &[Key] {
        match &self.repr {
            Repr::Own(e) => e.keys.as_slice(),
            Repr::Stored(t) => &t.header.header.keys,
        }
    }

    #[inline]
    fn position(&self, key: &str) -> Option<usize> {
        match &self.repr {
            Repr::Own(e) => e.position(key),
            Repr::Stored(t) => t
                .header
                .header
                .search(key.as_bytes(), || head(key.as_bytes())),
        }
    }

    /// The entries, copied first if another map shares them, or out of the stored form (a
    /// shared array of keys stays shared: only the count and the values move).
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn entries_mut(&mut self) -> &mut Entries {
        if let Repr::Stored(t) = &mut self.repr {
            let keys = Keys::Shared(Arc::clone(&t.header.header));
            self.repr = Repr::Own(Arc::new(Entries {
                keys,
                values: stored_values(t),
            }));
        }
        match &mut self.repr {
            Repr::Own(e) => Arc::make_mut(e),
            Repr::Stored(_) => unreachable!("a stored map was just copied out"),
        }
    }

    /// The entries when no other map shares them and the map is not stored: what
    /// [`Map::clear`] empties in place.
    fn entries_alone(&mut self) -> Option<&mut Entries> {
        match &mut self.repr {
            Repr::Own(e) => Arc::get_mut(e),
            Repr::Stored(_) => None,
        }
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn get(&self, key: &str) -> Option<&Value> {
        Some(&self.values_slice()[self.position(key)?])
    }

    pub fn get_key_value(&self, key: &str) -> Option<(&Key, &Value)> {
        let i = self.position(key)?;
        Some((&self.keys_slice()[i], &self.values_slice()[i]))
    }

    /// [`Map::get`] of a key whose [`head`] is known (a [`super::Path`]'s token).
    #[inline]
    pub(super) fn get_by_head(&self, key: &str, h: u64) -> Option<&Value> {
        match &self.repr {
            Repr::Own(e) => Some(&e.values[e.position_by_head(key, h)?]),
            Repr::Stored(t) => Some(&t.slice[t.header.header.search(key.as_bytes(), || h)?]),
        }
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let i = self.position(key)?;
        Some(&mut self.entries_mut().values[i])
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`: in its place if present (answering the old value), else last.
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) -> Option<Value> {
        self.insert_key(key.into(), value)
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn insert_key(&mut self, key: Key, value: Value) -> Option<Value> {
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.entries_mut().values[i], value)),
            None => {
                self.entries_mut().push(key, value);
                None
            }
        }
    }

    /// Removes `key`, moving the last member into its place (`serde_json::Map::remove` with
    /// `preserve_order` is this swap remove).
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.swap_remove(key)
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn swap_remove(&mut self, key: &str) -> Option<Value> {
        self.remove_entry(key).map(|(_, v)| v)
    }

    pub fn remove_entry(&mut self, key: &str) -> Option<(Key, Value)> {
        let i = self.position(key)?;
        Some(self.entries_mut().swap_remove(i))
    }

    /// Removes `key`, keeping the order of the rest.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        let e = self.entries_mut();
        e.keys.own().remove(i);
        Some(e.values.remove(i))
    }

    /// Empties the map, keeping its room when no other map shares it.
    pub fn clear(&mut self) {
        match self.entries_alone() {
            Some(e) => {
                match &mut e.keys {
                    Keys::Own(v) => v.clear(),
                    Keys::Shared(_) => e.keys = Keys::Own(Vec::new()),
                }
                e.values.clear();
            }
            None => *self = Map::new(),
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Key, &mut Value) -> bool) {
        let e = self.entries_mut();
        let keys = e.keys.own();
        let mut kept = 0;
        for i in 0..keys.len() {
            if keep(&keys[i], &mut e.values[i]) {
                keys.swap(kept, i);
                e.values.swap(kept, i);
                kept += 1;
            }
        }
        keys.truncate(kept);
        e.values.truncate(kept);
    }

    pub fn append(&mut self, other: &mut Map) {
        for (k, v) in std::mem::take(other) {
            self.insert(k, v);
        }
    }

    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub fn entry(&mut self, key: impl Into<Key>) -> Entry<'_> {
        let key = key.into();
        match self.position(&key) {
            Some(index) => Entry::Occupied(OccupiedEntry { map: self, index }),
            None => Entry::Vacant(VacantEntry { map: self, key }),
        }
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.keys_slice().iter().zip(self.values_slice().iter()),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        let e = self.entries_mut();
        IterMut {
            inner: e.keys.as_slice().iter().zip(e.values.iter_mut()),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Key> + ExactSizeIterator + Clone {
        self.keys_slice().iter()
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.values_slice().iter()
    }

    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.entries_mut().values.iter_mut()
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator {
        match self.repr {
            Repr::Own(e) => Arc::unwrap_or_clone(e).values.into_iter(),
            Repr::Stored(mut t) => stored_values(&mut t).into_iter(),
        }
    }

    pub fn sort_keys(&mut self) {
        let e = self.entries_mut();
        let keys = e.keys.own();
        let mut pairs: Vec<(Key, Value)> = keys.drain(..).zip(e.values.drain(..)).collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in pairs {
            keys.push(k);
            e.values.push(v);
        }
    }

    /// Stores the map, here and below: gives back the room beyond the members' length, makes
    /// the keys an array to share, and the map one allocation ([`Repr::Stored`]). A level
    /// being built that another holder shares (a kubelet keeps the status it sent, which the
    /// API server merged into the Pod it stores) is stored as a copy, the other holder's left
    /// as it is; a level already stored is left as it is.
    pub fn compact(&mut self) {
        if let Some(e) = self.entries_to_store() {
            e.values.iter_mut().for_each(Value::compact);
            self.repr = stored(e, None);
        }
    }

    /// The entries of a map not yet stored, copied first if another map shares them.
    fn entries_to_store(&mut self) -> Option<&mut Entries> {
        match &mut self.repr {
            Repr::Own(e) => Some(Arc::make_mut(e)),
            Repr::Stored(_) => None,
        }
    }

    /// [`Map::compact`], and each level not yet stored that is identical to the same
    /// level of `like` (the same members in the same order, [`Value::identical`]) becomes a
    /// reference to `like`'s: one allocation for both, copied again only when one is written.
    /// A level with `like`'s keys in the same order shares `like`'s array of keys. Nothing a
    /// reader can see changes.
    pub fn compact_like(&mut self, like: &Map) {
        if Map::ptr_eq(self, like) {
            return;
        }
        if self.is_stored() {
            return;
        }
        let like_shared = like.shared_keys().cloned();
        let (like_keys, like_values) = (like.keys_slice(), like.values_slice());
        // Only a stored level is shared, so the levels of a stored map are all stored.
        if like.is_stored()
            && identical_entries(
                self.keys_slice(),
                self.values_slice(),
                like_keys,
                like_values,
            )
        {
            *self = like.clone();
            return;
        }
        let Some(e) = self.entries_to_store() else {
            return;
        };
        for (i, (k, v)) in e
            .keys
            .as_slice()
            .iter()
            .zip(e.values.iter_mut())
            .enumerate()
        {
            // The same member of `like`, most often at the same place.
            let same = match like_keys.get(i) {
                Some(lk) if lk == k => like_values.get(i),
                _ => like.get(k),
            };
            match same {
                Some(w) => v.compact_like(w),
                None => v.compact(),
            }
        }
        self.repr = stored(e, like_shared.as_ref());
    }

    /// Whether the map is stored ([`Map::compact`]): one allocation, its members stored too.
    pub(super) fn is_stored(&self) -> bool {
        matches!(self.repr, Repr::Stored(_))
    }

    /// The shared array of keys, where the map has one.
    fn shared_keys(&self) -> Option<&Arc<SharedKeys>> {
        match &self.repr {
            Repr::Own(e) => match &e.keys {
                Keys::Shared(keys) => Some(keys),
                Keys::Own(_) => None,
            },
            Repr::Stored(t) => Some(&t.header.header),
        }
    }

    /// The same members in the same order, each [`Value::identical`]: what
    /// [`Map::compact_like`] may share. Stricter than `==`, which ignores order.
    pub fn identical(&self, other: &Map) -> bool {
        Map::ptr_eq(self, other)
            || identical_entries(
                self.keys_slice(),
                self.values_slice(),
                other.keys_slice(),
                other.values_slice(),
            )
    }
}

/// A stored map's values, moved out where no other map shares them, else copied.
fn stored_values(t: &mut ThinArc<Arc<SharedKeys>, Value>) -> Vec<Value> {
    t.with_arc_mut(|a| {
        triomphe::Arc::get_mut(a)
            .map(|alone| alone.slice_mut().iter_mut().map(std::mem::take).collect())
    })
    .unwrap_or_else(|| t.slice.to_vec())
}

/// The stored form of entries whose members are stored: one allocation holding the values,
/// moved, at their length, and the keys as an array to share (`like`'s when it is one and holds
/// the same keys in the same order).
fn stored(e: &mut Entries, like: Option<&Arc<SharedKeys>>) -> Repr {
    let keys = match like {
        Some(a) if *a.keys == *e.keys.as_slice() => Arc::clone(a),
        _ => match &mut e.keys {
            Keys::Shared(a) => Arc::clone(a),
            Keys::Own(v) => SharedKeys::shared(std::mem::take(v)),
        },
    };
    let values = std::mem::take(&mut e.values);
    Repr::Stored(ThinArc::from_header_and_iter(keys, values.into_iter()))
}

fn identical_entries(a_keys: &[Key], a: &[Value], b_keys: &[Key], b: &[Value]) -> bool {
    a_keys == b_keys && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.identical(y))
}

/// Equality as `serde_json::Map`'s: the same keys with equal values, in any order.
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        if Map::ptr_eq(self, other) {
            return true;
        }
        self.len() == other.len()
            && self
                .iter()
                .all(|(k, v)| other.get(k).is_some_and(|w| v == w))
    }
}

impl Eq for Map {}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl std::ops::Index<&str> for Map {
    type Output = Value;

    /// The member; panics when absent, as `serde_json::Map`'s index does.
    fn index(&self, key: &str) -> &Value {
        self.get(key).expect("no entry found for key")
    }
}

impl std::ops::IndexMut<&str> for Map {
    fn index_mut(&mut self, key: &str) -> &mut Value {
        self.get_mut(key).expect("no entry found for key")
    }
}

impl<K: Into<Key>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let mut map = Map::new();
        map.extend(iter);
        map
    }
}

impl<K: Into<Key>> Extend<(K, Value)> for Map {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

/// A member's slot, as `serde_json::map::Entry`.
pub enum Entry<'a> {
    Vacant(VacantEntry<'a>),
    Occupied(OccupiedEntry<'a>),
}

pub struct VacantEntry<'a> {
    map: &'a mut Map,
    key: Key,
}

pub struct OccupiedEntry<'a> {
    map: &'a mut Map,
    index: usize,
}

impl<'a> Entry<'a> {
    pub fn key(&self) -> &Key {
        match self {
            Entry::Vacant(e) => &e.key,
            Entry::Occupied(e) => e.key(),
        }
    }

    pub fn or_insert(self, default: Value) -> &'a mut Value {
        match self {
            Entry::Vacant(e) => e.insert(default),
            Entry::Occupied(e) => e.into_mut(),
        }
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> Value) -> &'a mut Value {
        match self {
            Entry::Vacant(e) => e.insert(default()),
            Entry::Occupied(e) => e.into_mut(),
        }
    }

    pub fn or_default(self) -> &'a mut Value {
        self.or_insert(Value::Null)
    }

    pub fn and_modify(self, f: impl FnOnce(&mut Value)) -> Self {
        match self {
            Entry::Occupied(mut e) => {
                f(e.get_mut());
                Entry::Occupied(e)
            }
            vacant => vacant,
        }
    }
}

impl<'a> VacantEntry<'a> {
    pub fn key(&self) -> &Key {
        &self.key
    }

    pub fn insert(self, value: Value) -> &'a mut Value {
        let e = self.map.entries_mut();
        e.push(self.key, value);
        e.values.last_mut().expect("just pushed")
    }
}

impl<'a> OccupiedEntry<'a> {
    pub fn key(&self) -> &Key {
        &self.map.keys_slice()[self.index]
    }

    pub fn get(&self) -> &Value {
        &self.map.values_slice()[self.index]
    }

    pub fn get_mut(&mut self) -> &mut Value {
        &mut self.map.entries_mut().values[self.index]
    }

    pub fn into_mut(self) -> &'a mut Value {
        &mut self.map.entries_mut().values[self.index]
    }

    pub fn insert(&mut self, value: Value) -> Value {
        std::mem::replace(self.get_mut(), value)
    }

    /// Takes the member out with a swap remove, as `serde_json`'s with `preserve_order`.
    pub fn remove(self) -> Value {
        self.map.entries_mut().swap_remove(self.index).1
    }
}

/// The members of a map, in order.
#[derive(Clone)]
pub struct Iter<'a> {
    inner: std::iter::Zip<std::slice::Iter<'a, Key>, std::slice::Iter<'a, Value>>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Key, &'a Value);

    // One copy in wasm, where an inlined `Zip` at every loop over a map's members was most of
    // the bytes that holding keys apart added to the module.
    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back()
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The members of a map, in order, their values writable.
pub struct IterMut<'a> {
    inner: std::iter::Zip<std::slice::Iter<'a, Key>, std::slice::IterMut<'a, Value>>,
}

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a Key, &'a mut Value);

    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for IterMut<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back()
    }
}

impl ExactSizeIterator for IterMut<'_> {}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a Key, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a Key, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl IntoIterator for Map {
    type Item = (Key, Value);
    type IntoIter = IntoIter;

    /// The members, moved out when no other map shares them (else copied).
    fn into_iter(self) -> IntoIter {
        let mut e = match self.repr {
            Repr::Own(e) => Arc::unwrap_or_clone(e),
            Repr::Stored(mut t) => Entries {
                keys: Keys::Own(t.header.header.keys.to_vec()),
                values: stored_values(&mut t),
            },
        };
        let keys = std::mem::take(e.keys.own());
        IntoIter {
            inner: keys.into_iter().zip(e.values),
        }
    }
}

/// The members of a map, moved out in order.
pub struct IntoIter {
    inner: std::iter::Zip<std::vec::IntoIter<Key>, std::vec::IntoIter<Value>>,
}

impl Iterator for IntoIter {
    type Item = (Key, Value);

    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    fn next(&mut self) -> Option<(Key, Value)> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for IntoIter {
    fn next_back(&mut self) -> Option<(Key, Value)> {
        self.inner.next_back()
    }
}

impl ExactSizeIterator for IntoIter {}

/// The `N` bytes of `s` from `at`, for [`head`] and [`same_bytes`] to read as a word.
#[inline]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    s[at..at + N].try_into().expect("N bytes")
}

/// `a == b` in a few word compares, in place of a `bcmp` call: keys are a few bytes, and
/// members' names often share a length (`kind`, `name`), so the call cost more than the
/// comparing (natively a libc call; in wasm a byte loop). Eight bytes at a time, the last word
/// overlapping the one before it; under eight, two overlapping halves (as `cmp_bytes` orders
/// object keys), so no length takes a byte loop.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let mut at = 0;
        loop {
            let at_end = at + 8 >= n;
            if at_end {
                at = n - 8;
            }
            if word::<8>(a, at) != word::<8>(b, at) {
                return false;
            }
            if at_end {
                return true;
            }
            at += 8;
        }
    } else if n >= 4 {
        word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4)
    } else if n >= 2 {
        word::<2>(a, 0) == word::<2>(b, 0) && word::<2>(a, n - 2) == word::<2>(b, n - 2)
    } else {
        n == 0 || a[0] == b[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys_of(m: &Map) -> Option<&Arc<SharedKeys>> {
        m.shared_keys()
    }

    /// Two stored levels with the same keys in the same order hold one array of keys; a write
    /// of a value keeps it shared, a new member gives the map its own keys, and neither write
    /// reaches the other map.
    #[test]
    fn stored_levels_with_the_same_keys_share_them() {
        let build = |name: &str, other: &str| -> Map {
            [("name", Value::from(name)), ("uid", Value::from(other))]
                .into_iter()
                .collect()
        };
        let mut first = build("web-1", "a");
        first.compact();
        let mut second = build("web-2", "b");
        second.compact_like(&first);
        let shared = Arc::clone(keys_of(&first).expect("stored"));
        assert!(Arc::ptr_eq(keys_of(&second).expect("stored"), &shared));
        // Other keys, or the same in another order, are not shared.
        let mut other: Map = [("uid", Value::from("c")), ("name", Value::from("web-3"))]
            .into_iter()
            .collect();
        other.compact_like(&first);
        assert!(!Arc::ptr_eq(keys_of(&other).expect("stored"), &shared));
        let mut copy = second.clone();
        *copy.get_mut("name").expect("present") = Value::from("web-9");
        assert!(Arc::ptr_eq(keys_of(&copy).expect("stored"), &shared));
        copy.insert("phase", Value::from("Running"));
        assert!(keys_of(&copy).is_none());
        assert_eq!(
            format!("{second:?}"),
            r#"{"name": String("web-2"), "uid": String("b")}"#
        );
        assert_eq!(
            format!("{copy:?}"),
            r#"{"name": String("web-9"), "uid": String("b"), "phase": String("Running")}"#
        );
    }

    /// A stored map is one allocation; a write copies its values out, leaving the stored map
    /// (and its copies) as they were; emptying it, or moving its members out, answers as a
    /// map being built does.
    #[test]
    fn a_stored_map_is_one_allocation_until_written() {
        let stored_form = Map::is_stored;
        let mut m: Map = [("name", Value::from("web-1")), ("uid", Value::from("a"))]
            .into_iter()
            .collect();
        assert!(!stored_form(&m));
        m.compact();
        assert!(stored_form(&m));
        let copy = m.clone();
        assert!(Map::ptr_eq(&m, &copy));
        m.insert("name", Value::from("web-2"));
        assert!(!stored_form(&m) && stored_form(&copy));
        assert!(Arc::ptr_eq(
            keys_of(&m).expect("shared"),
            keys_of(&copy).expect("stored")
        ));
        assert_eq!(
            format!("{copy:?}"),
            r#"{"name": String("web-1"), "uid": String("a")}"#
        );
        assert_eq!(
            format!("{m:?}"),
            r#"{"name": String("web-2"), "uid": String("a")}"#
        );
        // Stored again like the copy: its keys are the copy's.
        m.compact_like(&copy);
        assert!(stored_form(&m) && !Map::ptr_eq(&m, &copy));
        assert_eq!(m.get("name"), Some(&Value::from("web-2")));
        let members: Vec<(Key, Value)> = copy.clone().into_iter().collect();
        assert_eq!(
            members,
            [
                ("name".into(), Value::from("web-1")),
                ("uid".into(), Value::from("a"))
            ]
        );
        assert_eq!(copy.clone().into_values().count(), 2);
        let mut emptied = copy.clone();
        emptied.clear();
        assert!(emptied.is_empty() && copy.len() == 2);
    }

    proptest! {
        /// `same_bytes` is `==`, around the eight-byte steps and for keys one byte apart.
        #[test]
        fn same_bytes_is_equality(a in "[ab]{0,19}", flip in 0usize..20) {
            let mut b = a.clone().into_bytes();
            if let Some(x) = b.get_mut(flip) {
                *x ^= 1;
            }
            prop_assert!(same_bytes(a.as_bytes(), a.as_bytes()));
            prop_assert_eq!(same_bytes(a.as_bytes(), &b), a.as_bytes() == b.as_slice());
            prop_assert_eq!(same_bytes(a.as_bytes(), &b[..b.len() / 2]), a.is_empty());
        }

        /// Equal texts have equal heads; texts of up to seven bytes with equal heads are
        /// equal, so a search believes them without reading the key (one flipped bit at any
        /// place, or a shorter text, changes the head of a short text).
        #[test]
        fn heads_tell_short_keys_apart(a in "[ab\u{0}]{0,12}", flip in 0usize..12, cut in 0usize..12) {
            let mut b = a.clone().into_bytes();
            if let Some(x) = b.get_mut(flip) {
                *x ^= 1;
            }
            let short = &b[..cut.min(b.len())];
            for other in [b.as_slice(), short] {
                let same = a.as_bytes() == other;
                if same {
                    prop_assert_eq!(head(a.as_bytes()), head(other));
                }
                if a.len() < 8 && other.len() < 8 {
                    prop_assert_eq!(head(a.as_bytes()) == head(other), same);
                }
            }
        }

        /// The compile-time head is the run-time one, at every length.
        #[test]
        fn a_head_made_when_compiled_is_the_same(a in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(head_of(&a), head(&a));
        }
    }

    /// Maps stored with nothing to compare with (each its first version) share one array when
    /// their keys are the same and in the same order, and not otherwise.
    #[test]
    fn maps_stored_alone_with_the_same_keys_share_them() {
        let build = |keys: &[&str]| -> Map {
            let mut m: Map = keys.iter().map(|k| (*k, Value::from(*k))).collect();
            m.compact();
            m
        };
        let (a, b) = (build(&["phase", "qosClass"]), build(&["phase", "qosClass"]));
        assert!(Arc::ptr_eq(
            keys_of(&a).expect("stored"),
            keys_of(&b).expect("stored")
        ));
        let c = build(&["qosClass", "phase"]);
        assert!(!Arc::ptr_eq(
            keys_of(&a).expect("stored"),
            keys_of(&c).expect("stored")
        ));
        assert_eq!(c.keys().collect::<Vec<_>>(), ["qosClass", "phase"]);
    }

    /// A stored map finds every member it has, short and long, and none it lacks: a long key
    /// whose first seven bytes and length are another's is told apart by its text.
    #[test]
    fn a_stored_map_finds_its_members_by_head_and_text() {
        let keys = [
            "a", "ab", "abcd", "abcdefg", "abcdefgh", "abcdefgX", "status", "",
        ];
        let mut m: Map = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, Value::from(i as u64)))
            .collect();
        m.compact();
        assert!(keys_of(&m).is_some());
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(&Value::from(i as u64)), "{k:?}");
        }
        for k in ["b", "abc", "abcdefgY", "abcdefghi", "statu", "Status"] {
            assert_eq!(m.get(k), None, "{k:?}");
        }
    }
}
