//! The JSON value every object, request and answer is held as.
//!
//! Everything in the workspace names `Value`, `Map`, `Number` and `json!` through this module.
//! The API is `serde_json::Value`'s, and every answer is the same (order, equality, `Display`,
//! `Debug`, indexing), but objects are [`Map`]s: shared between copies until one is written, so
//! copying a stored object costs a reference count and a write copies only the levels it
//! changes. Numbers are `serde_json::Number`, so they print as before.

mod list;
mod macros;
mod map;
#[doc(hidden)]
pub mod path_impl;
mod serde_impl;

pub use list::List;
pub use map::{Entry, IntoIter, Iter, IterMut, Key, Map, OccupiedEntry, VacantEntry};
pub use serde_impl::{from_serde, from_value, into_serde, to_value};
pub use serde_json::Number;

#[doc(hidden)]
pub use macros::__private;

pub use crate::__json as json;
pub use crate::__path as path;
pub use path_impl::{Path, Pointer};

/// RFC 6902 JSON patch, as `json_patch::patch_unsafe` applies it (on a copy of `doc` in
/// serde_json's form: JSON patches are rare, and that crate reads only that form).
pub fn patch_unsafe(
    doc: &mut Value,
    ops: &json_patch::Patch,
) -> Result<(), json_patch::PatchError> {
    let mut plain = into_serde(doc.take());
    let result = json_patch::patch_unsafe(&mut plain, ops);
    *doc = from_serde(plain);
    result
}

use std::fmt;

/// A string value: inline up to 24 bytes, as a map's keys are, so most of an object's
/// strings (names, reasons, times, images) take no allocation of their own.
pub type Str = compact_str::CompactString;

/// A JSON value, with `serde_json::Value`'s variants and methods.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Str),
    Array(List),
    Object(Map),
}

// An array behind one pointer (`List`) leaves a string's spare byte to tell the variants
// apart: every value, and so every member of every stored object, is 24 bytes, not 32.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Value>() == 24);

static NULL: Value = Value::Null;

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }
    pub fn is_u64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_u64())
    }
    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }

    pub fn as_null(&self) -> Option<()> {
        self.is_null().then_some(())
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The object, to write: the map's writing methods copy its level first if another value
    /// shares it.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member or element `index` names, as `serde_json::Value::get`.
    pub fn get<I: ValueIndex>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }

    pub fn get_mut<I: ValueIndex>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }

    /// The value at an RFC 6901 JSON pointer, as `serde_json::Value::pointer`, without
    /// allocating: serde_json's builds two new strings per token (for `~1` and `~0`), and reads
    /// like `/metadata/resourceVersion` run for every object on every event. A token is
    /// unescaped only when it holds `~`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let bytes = rest.as_bytes();
        let mut target = self;
        let mut start = 0;
        loop {
            let mut end = token_end(bytes, start);
            let next = if bytes.get(end) == Some(&b'~') {
                // A token holding `~` (rare) is unescaped whole, up to the next `/`.
                end = rest[end..].find('/').map_or(bytes.len(), |i| end + i);
                target.pointer_step(&rest[start..end].replace("~1", "/").replace("~0", "~"))?
            } else {
                target.pointer_step(&rest[start..end])?
            };
            if end == bytes.len() {
                return Some(next);
            }
            target = next;
            start = end + 1;
        }
    }

    /// One unescaped pointer token: an object's member or an array's element.
    fn pointer_step(&self, token: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.get(token),
            Value::Array(list) => parse_index(token).and_then(|i| list.get(i)),
            _ => None,
        }
    }

    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .try_fold(self, |target, token| match target {
                Value::Object(map) => map.get_mut(&token),
                Value::Array(list) => parse_index(&token).and_then(move |i| list.get_mut(i)),
                _ => None,
            })
    }

    /// Stores every object here and gives back the room every array and string holds beyond
    /// its length ([`Map::compact`], [`List::compact`]): a level being built that another
    /// holder shares is stored as a copy; a stored one is left as it is.
    pub fn compact(&mut self) {
        match self {
            Value::Object(m) => m.compact(),
            Value::Array(a) => a.compact(),
            Value::String(s) => s.shrink_to_fit(),
            _ => {}
        }
    }

    /// Whether this value holds an object not yet stored ([`Value::compact`]), itself or in
    /// an array (a stored object's members are stored already).
    pub(super) fn being_built(&self) -> bool {
        match self {
            Value::Object(m) => !m.is_stored(),
            Value::Array(a) => a.iter().any(Value::being_built),
            _ => false,
        }
    }

    /// [`Value::compact`], sharing the levels identical to `like`'s ([`Map::compact_like`]);
    /// an array's items are matched with `like`'s by position.
    pub fn compact_like(&mut self, like: &Value) {
        match (self, like) {
            (Value::Object(m), Value::Object(l)) => m.compact_like(l),
            (Value::Array(a), Value::Array(l)) => a.compact_like(l),
            (v, _) => v.compact(),
        }
    }

    /// [`Value::compact_like`] the value kept before this one, or [`Value::compact`] when there
    /// is none: what each holder that keeps a series of like values (the store, an event
    /// broadcaster) does with the next.
    pub fn compact_like_last(&mut self, last: Option<&Value>) {
        match last {
            Some(like) => self.compact_like(like),
            None => self.compact(),
        }
    }

    /// The same value written the same way: `==`, and objects' members in the same order too
    /// (so both print the same text).
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Object(a), Value::Object(b)) => a.identical(b),
            (Value::Array(a), Value::Array(b)) => a.identical(b),
            // -0.0 == 0.0, but they print differently.
            (Value::Number(a), Value::Number(b)) => {
                a == b && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
            }
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Null, Value::Null) => true,
            _ => false,
        }
    }

    /// Takes the value out, leaving `Null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// Where the pointer token starting at `start` ends: the index of the first `/` or `~` from
/// `start`, or the length. Eight bytes at a time (a byte-at-a-time loop was most of
/// [`Value::pointer`]'s own cost, the reads running for every object on every event); `/` and
/// `~` are ASCII, so the index is on a char boundary.
#[inline]
fn token_end(bytes: &[u8], start: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The bytes of `w` equal to `b` have their high bit set in the answer; the lowest set bit
    // is exact (the borrow only runs upwards, so any false match sits above a true one).
    let matches = |w: u64, b: u8| {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let len = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let mut i = start;
    while i < len {
        let n = (len - i).min(8);
        // The last few bytes: the pointer's last word, shifted so they come first (zeros,
        // which match nothing, after them); a pointer under eight bytes, byte by byte. A
        // copy into a zeroed word was a `memcpy` call per token.
        let w = if n == 8 {
            word(i)
        } else if len >= 8 {
            word(len - 8) >> (8 * (8 - n))
        } else {
            bytes[i..]
                .iter()
                .rev()
                .fold(0u64, |w, &b| (w << 8) | u64::from(b))
        };
        let hits = matches(w, b'/') | matches(w, b'~');
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += n;
    }
    len
}

/// An array index token as `serde_json::Value::pointer` reads it.
fn parse_index(s: &str) -> Option<usize> {
    if s.starts_with('+') || (s.starts_with('0') && s.len() != 1) {
        return None;
    }
    s.parse().ok()
}

/// What can index a `Value`: a key or a position (`serde_json::value::Index`).
pub trait ValueIndex {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// `value[index] = ...`: a `Null` becomes an object for a key; panics as serde_json does.
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

impl ValueIndex for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        match v {
            Value::Array(a) => a.get(*self),
            _ => None,
        }
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        match v {
            Value::Array(a) => a.get_mut(*self),
            _ => None,
        }
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        match v {
            Value::Array(a) => {
                let len = a.len();
                a.get_mut(*self).unwrap_or_else(|| {
                    panic!(
                        "cannot access index {} of JSON array of length {}",
                        self, len
                    )
                })
            }
            _ => panic!("cannot access index {} of JSON {}", self, Kind(v)),
        }
    }
}

impl ValueIndex for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        match v {
            Value::Object(m) => m.get(self),
            _ => None,
        }
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        match v {
            Value::Object(m) => m.get_mut(self),
            _ => None,
        }
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        match v {
            Value::Object(m) => m.entry(self).or_insert(Value::Null),
            _ => panic!("cannot access key {:?} in JSON {}", self, Kind(v)),
        }
    }
}

impl ValueIndex for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl ValueIndex for Key {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl<T: ValueIndex + ?Sized> ValueIndex for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

/// A value's kind, as serde_json's panics name it.
struct Kind<'a>(&'a Value);

impl fmt::Display for Kind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        })
    }
}

impl<I: ValueIndex> std::ops::Index<I> for Value {
    type Output = Value;

    /// The member or element, or `Null` when absent (`serde_json::Value`'s index).
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

impl<I: ValueIndex> std::ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

impl fmt::Debug for Value {
    /// serde_json's `Debug`: `Null`, `Bool(true)`, `Number(1)`, `String("a")`, `Array [..]`,
    /// `Object {..}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Number(n) => fmt::Debug::fmt(n, f),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Array(a) => {
                f.write_str("Array ")?;
                fmt::Debug::fmt(a, f)
            }
            Value::Object(m) => {
                f.write_str("Object ")?;
                fmt::Debug::fmt(m, f)
            }
        }
    }
}

impl fmt::Display for Value {
    /// Compact JSON, or indented with `{:#}`, as serde_json's `Display`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if f.alternate() {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        }
        .map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl std::str::FromStr for Value {
    type Err = serde_json::Error;

    fn from_str(s: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str(s)
    }
}

// Conversions, as serde_json's `From` impls.

macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from(n))
            }
        }
    )*};
}

from_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl From<f64> for Value {
    /// A number, or `Null` when not finite.
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Number::from_f64(f64::from(f)).map_or(Value::Null, Value::Number)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.as_str().into())
    }
}

impl From<std::borrow::Cow<'_, str>> for Value {
    fn from(s: std::borrow::Cow<'_, str>) -> Value {
        Value::String(s.into())
    }
}

impl From<Key> for Value {
    fn from(s: Key) -> Value {
        Value::String(s)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(v: &[T]) -> Value {
        Value::Array(v.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Into<Value>, const N: usize> From<[T; N]> for Value {
    fn from(v: [T; N]) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl From<()> for Value {
    fn from((): ()) -> Value {
        Value::Null
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Value {
        Value::Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<Key>, V: Into<Value>> FromIterator<(K, V)> for Value {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Value {
        Value::Object(iter.into_iter().map(|(k, v)| (k, v.into())).collect())
    }
}

// Comparisons with plain values, as serde_json's.

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<Value> for str {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<Value> for &str {
    fn eq(&self, other: &Value) -> bool {
        other == *self
    }
}

impl PartialEq<Value> for String {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<bool> for &Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<str> for &Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

/// Integers compare as serde_json's do: read as the widest type of their sign.
macro_rules! eq_integer {
    ($read:ident $wide:ty: $($t:ty)*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.$read() == Some(<$wide>::from(*other))
            }
        }
        impl PartialEq<$t> for &Value {
            fn eq(&self, other: &$t) -> bool {
                **self == *other
            }
        }
        impl PartialEq<Value> for $t {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }
    )*};
}

eq_integer!(as_i64 i64: i8 i16 i32 i64);
eq_integer!(as_u64 u64: u8 u16 u32 u64);

impl PartialEq<usize> for Value {
    fn eq(&self, other: &usize) -> bool {
        self.as_u64() == u64::try_from(*other).ok()
    }
}

impl PartialEq<isize> for Value {
    fn eq(&self, other: &isize) -> bool {
        self.as_i64() == i64::try_from(*other).ok()
    }
}

impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

#[cfg(test)]
mod tests;
