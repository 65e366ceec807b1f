//! A JSON array: items shared between copies until one is written, as a [`Map`]'s members are.
//!
//! A `Vec<Value>` in place took 24 bytes in every value, so a [`Value`] was 32 bytes; behind one
//! pointer a value is 24 (the string's spare byte tells the variants apart), which every member
//! of every stored object saves. A copy of an array is a count, where a `Vec` copied its items:
//! a write to an object copied each array of the level it changed.
//!
//! It reads as a `Vec<Value>` (`Deref`); a write through it (`DerefMut`) copies the items first
//! if another array shares them.

use super::Value;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A JSON array (see the module's text).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct List {
    items: Arc<Vec<Value>>,
}

impl List {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether two arrays are the same allocation (so equal without looking).
    pub fn ptr_eq(a: &List, b: &List) -> bool {
        Arc::ptr_eq(&a.items, &b.items)
    }

    /// The items as a vector, copied if another array shares them.
    pub fn into_vec(self) -> Vec<Value> {
        Arc::unwrap_or_clone(self.items)
    }

    /// Gives back the room this array and its items hold beyond their length, and stores the
    /// objects in it ([`super::Map::compact`]). An array another holder shares is copied first
    /// when it holds an object not yet stored (the list a kubelet sent in its status patch,
    /// which the stored Pod now holds too), else left as it is.
    pub fn compact(&mut self) {
        if let Some(items) = self.items_to_store() {
            items.iter_mut().for_each(Value::compact);
            items.shrink_to_fit();
        }
    }

    /// The items to compact: this array's own, or a copy where another holder shares them and
    /// they hold an object not yet stored; None when there is nothing to store.
    fn items_to_store(&mut self) -> Option<&mut Vec<Value>> {
        if Arc::get_mut(&mut self.items).is_none() && !self.items.iter().any(Value::being_built) {
            return None;
        }
        Some(Arc::make_mut(&mut self.items))
    }

    /// [`List::compact`], sharing `like`'s items when they are identical
    /// ([`Value::identical`]), else each item's levels identical to those of `like`'s item at
    /// the same place ([`Value::compact_like`]). Nothing a reader can see changes.
    pub fn compact_like(&mut self, like: &List) {
        if List::ptr_eq(self, like) {
            return;
        }
        // Only items all stored are shared, so a stored object holds no level being built.
        if identical_items(&self.items, &like.items) && !like.iter().any(Value::being_built) {
            self.items = Arc::clone(&like.items);
            return;
        }
        let Some(items) = self.items_to_store() else {
            return;
        };
        for (i, v) in items.iter_mut().enumerate() {
            match like.get(i) {
                Some(w) => v.compact_like(w),
                None => v.compact(),
            }
        }
        items.shrink_to_fit();
    }

    /// The same items in the same order, each [`Value::identical`]: what
    /// [`List::compact_like`] may share.
    pub fn identical(&self, other: &List) -> bool {
        List::ptr_eq(self, other) || identical_items(&self.items, &other.items)
    }
}

fn identical_items(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.identical(y))
}

impl Deref for List {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.items
    }
}

impl DerefMut for List {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        Arc::make_mut(&mut self.items)
    }
}

impl From<Vec<Value>> for List {
    fn from(items: Vec<Value>) -> List {
        List {
            items: Arc::new(items),
        }
    }
}

impl From<List> for Vec<Value> {
    fn from(list: List) -> Vec<Value> {
        list.into_vec()
    }
}

impl FromIterator<Value> for List {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> List {
        List::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl IntoIterator for List {
    type Item = Value;
    type IntoIter = std::vec::IntoIter<Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a List {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a> IntoIterator for &'a mut List {
    type Item = &'a mut Value;
    type IntoIter = std::slice::IterMut<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.deref_mut().iter_mut()
    }
}

impl std::fmt::Debug for List {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self.items, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    #[test]
    fn copies_share_until_one_is_written() {
        let a = json!([1, {"x": [2]}]);
        let mut b = a.clone();
        let (Value::Array(la), Value::Array(lb)) = (&a, &b) else {
            unreachable!()
        };
        assert!(List::ptr_eq(la, lb));
        b[1]["x"].as_array_mut().unwrap().push(json!(3));
        assert_eq!(a, json!([1, {"x": [2]}]));
        assert_eq!(b, json!([1, {"x": [2, 3]}]));
        assert_eq!(
            format!("{a:?}"),
            "Array [Number(1), Object {\"x\": Array [Number(2)]}]"
        );
    }

    #[test]
    fn compact_like_shares_identical_arrays_only() {
        let like = json!({"a": [1, 2], "b": [1]});
        let mut v = json!({"a": [1, 2], "b": [1.0]});
        v.compact_like(&like);
        let shared = |v: &Value, k: &str| match (&v[k], &like[k]) {
            (Value::Array(x), Value::Array(y)) => List::ptr_eq(x, y),
            _ => false,
        };
        assert!(shared(&v, "a"));
        assert!(!shared(&v, "b"));
        assert_eq!(v.to_string(), r#"{"a":[1,2],"b":[1.0]}"#);
    }
}
