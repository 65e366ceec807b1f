//! The object store: a persistent ordered map from [`ObjectKey`] to shared JSON objects, with
//! secondary indexes by uid and by owner uid (for garbage collection). Cloning is O(1), so the
//! engine can snapshot the world after every step.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;
use imbl::{OrdMap, OrdSet};

use super::types::{GroupResource, Name, ObjectKey};

/// Stored objects and their indexes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Store {
    // Keys are shared (`Arc`) so that the path copies a persistent write makes clone pointers,
    // not strings.
    #[serde(with = "crate::engine::checkpoint::shared_map")]
    objects: OrdMap<Arc<ObjectKey>, Arc<Value>>,
    by_uid: OrdMap<Arc<str>, Arc<ObjectKey>>,
    /// owner uid -> keys of objects whose ownerReferences name it.
    dependents: OrdMap<Arc<str>, OrdSet<Arc<ObjectKey>>>,
    /// Counts writes to RBAC objects (Roles, Bindings): what the API server's memo of
    /// authorization decisions is valid for.
    rbac_writes: u64,
}

impl Store {
    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<Value>> {
        self.objects.get(key)
    }

    /// How many times an `rbac.authorization.k8s.io` object was written or removed.
    pub fn rbac_writes(&self) -> u64 {
        self.rbac_writes
    }

    fn note_write(&mut self, key: &ObjectKey) {
        if key.gr.group == super::rbac::RBAC_GROUP {
            self.rbac_writes += 1;
        }
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    pub fn key_for_uid(&self, uid: &str) -> Option<&ObjectKey> {
        self.by_uid.get(uid).map(AsRef::as_ref)
    }

    /// The stored object with this uid.
    pub fn get_by_uid(&self, uid: &str) -> Option<&Arc<Value>> {
        self.key_for_uid(uid).and_then(|k| self.get(k))
    }

    pub fn contains_uid(&self, uid: &str) -> bool {
        self.by_uid.contains_key(uid)
    }

    /// Keys of the objects that name `owner_uid` in their ownerReferences.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<ObjectKey> {
        self.dependents
            .get(owner_uid)
            .map(|s| s.iter().map(|k| (**k).clone()).collect())
            .unwrap_or_default()
    }

    /// Owner uids that some object references; used for a full garbage-collection sweep.
    pub fn referenced_owner_uids(&self) -> Vec<String> {
        self.dependents.keys().map(|k| k.to_string()).collect()
    }

    fn unindex(&mut self, key: &ObjectKey, obj: &Value) {
        let uid = super::meta::uid(obj);
        if !uid.is_empty() && self.by_uid.get(uid).map(AsRef::as_ref) == Some(key) {
            self.by_uid.remove(uid);
        }
        for owner in super::meta::owner_uids(obj) {
            let now_empty = match self.dependents.get_mut(owner.as_str()) {
                Some(set) => {
                    set.remove(key);
                    set.is_empty()
                }
                None => false,
            };
            if now_empty {
                self.dependents.remove(owner.as_str());
            }
        }
    }

    fn index(&mut self, key: &Arc<ObjectKey>, obj: &Value) {
        let uid = super::meta::uid(obj);
        if !uid.is_empty() {
            self.by_uid.insert(Arc::from(uid), Arc::clone(key));
        }
        for owner in super::meta::owner_uids(obj) {
            self.dependents
                .entry(Arc::from(owner.as_str()))
                .or_default()
                .insert(Arc::clone(key));
        }
    }

    /// Inserts or replaces an object, keeping the indexes in step.
    pub fn put(&mut self, key: ObjectKey, obj: Value) {
        self.put_shared(key, Arc::new(obj));
    }

    /// [`Self::put`] of an object shared with others (the watch event that announces it).
    /// Returns the stored key, for indexes kept elsewhere to share.
    pub fn put_shared(&mut self, key: ObjectKey, obj: Arc<Value>) -> Arc<ObjectKey> {
        self.note_write(&key);
        let key = Arc::new(key);
        // One walk of the map: the insert answers with the version it replaced.
        if let Some(old) = self.objects.insert(Arc::clone(&key), Arc::clone(&obj)) {
            // Most writes keep the uid and the owners (every status write): taking the key out
            // of the indexes and putting it back would change nothing but copy their paths.
            // The indexes keep the key they hold, equal to this one. (A uid names one key:
            // the server makes every uid and refuses an update that changes one.)
            if Self::same_index_entries(&old, &obj) {
                return key;
            }
            self.unindex(&key, &old);
        }
        self.index(&key, &obj);
        key
    }

    /// Whether `old` and `new` have the same entries in the indexes: the same uid, and the
    /// same owner uids in the same order.
    fn same_index_entries(old: &Value, new: &Value) -> bool {
        use super::meta::{owner_refs, ref_uid, uid};
        uid(old) == uid(new)
            && owner_refs(old)
                .iter()
                .filter_map(ref_uid)
                .eq(owner_refs(new).iter().filter_map(ref_uid))
    }

    /// Removes the object, answering with the key the store held (shared) and the object.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<(Arc<ObjectKey>, Arc<Value>)> {
        let (held, old) = self.objects.remove_with_key(key)?;
        self.note_write(key);
        self.unindex(key, &old);
        Some((held, old))
    }

    /// Objects of one resource, in one namespace (`Some`) or all (`None`), ordered by key:
    /// a range scan, never a full scan.
    pub fn range<'a>(
        &'a self,
        gr: &'a GroupResource,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> + 'a {
        let start = ObjectKey {
            gr: gr.clone(),
            namespace: namespace.unwrap_or("").into(),
            name: Name::default(),
        };
        self.objects
            .range(start..)
            .take_while(move |(k, _)| &k.gr == gr && namespace.is_none_or(|ns| k.namespace == ns))
            .map(|(k, v)| (k.as_ref(), v))
    }

    /// Every object, ordered by key.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Arc<Value>)> {
        self.objects.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// [`Self::iter`] with the store's own keys, for maps that share them.
    pub fn iter_shared(&self) -> impl Iterator<Item = (&Arc<ObjectKey>, &Arc<Value>)> {
        self.objects.iter()
    }

    /// The objects whose keys fall in `range`, ordered by key.
    pub fn range_of_keys(
        &self,
        range: std::ops::Range<ObjectKey>,
    ) -> impl Iterator<Item = (&ObjectKey, &Arc<Value>)> {
        self.objects.range(range).map(|(k, v)| (k.as_ref(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn key(res: &str, ns: &str, name: &str) -> ObjectKey {
        ObjectKey::new(GroupResource::new("", res), ns, name)
    }

    #[test]
    fn range_scans_stay_inside_one_resource_and_namespace() {
        let mut s = Store::default();
        for (res, ns, name) in [
            ("pods", "a", "p1"),
            ("pods", "b", "p2"),
            ("pods", "a", "p3"),
            ("services", "a", "s1"),
            ("configmaps", "a", "c"),
        ] {
            s.put(key(res, ns, name), json!({"metadata": {"name": name}}));
        }
        let pods = GroupResource::new("", "pods");
        let names: Vec<&str> = s
            .range(&pods, Some("a"))
            .map(|(k, _)| k.name.as_str())
            .collect();
        assert_eq!(names, ["p1", "p3"]);
        assert_eq!(s.range(&pods, None).count(), 3);
        assert_eq!(s.range(&GroupResource::new("", "nodes"), None).count(), 0);
    }

    #[test]
    fn owner_index_follows_puts_and_removes() {
        let mut s = Store::default();
        let rs = key("replicasets", "a", "rs");
        s.put(
            rs.clone(),
            json!({"metadata": {"uid": "u1", "ownerReferences": [{"uid": "owner"}]}}),
        );
        assert_eq!(s.dependents_of("owner"), vec![rs.clone()]);
        assert!(s.contains_uid("u1"));
        s.put(rs.clone(), json!({"metadata": {"uid": "u1"}}));
        assert!(s.dependents_of("owner").is_empty());
        s.remove(&rs);
        assert!(!s.contains_uid("u1"));
        assert!(s.referenced_owner_uids().is_empty());
    }

    proptest::proptest! {
        /// After any run of writes (most keeping their uid and owners, as status writes do) and
        /// removes, the indexes are those of a store given only the surviving objects.
        #[test]
        fn indexes_are_those_of_the_objects_left(
            ops in proptest::collection::vec((0..3usize, 0..3usize, 0..4usize, 0..5u8), 1..40)
        ) {
            let owners = |n: usize| -> Vec<Value> {
                ["o1", "o2", "o3"][..n.min(3)].iter().map(|u| json!({"uid": u})).collect()
            };
            let mut s = Store::default();
            for (name, uid, owner_count, v) in ops {
                let k = key("pods", "a", &format!("p{name}"));
                if v == 0 {
                    s.remove(&k);
                } else {
                    let uid = format!("u{uid}{name}");
                    s.put(k, json!({"metadata": {"uid": uid, "ownerReferences": owners(owner_count)}, "v": v}));
                }
            }
            let mut fresh = Store::default();
            for (k, v) in s.objects.iter() {
                fresh.put((**k).clone(), (**v).clone());
            }
            let uids = |st: &Store| -> Vec<(String, ObjectKey)> {
                st.by_uid.iter().map(|(u, k)| (u.to_string(), (**k).clone())).collect()
            };
            proptest::prop_assert_eq!(uids(&s), uids(&fresh));
            proptest::prop_assert_eq!(s.referenced_owner_uids(), fresh.referenced_owner_uids());
            for owner in ["o1", "o2", "o3"] {
                proptest::prop_assert_eq!(s.dependents_of(owner), fresh.dependents_of(owner));
            }
        }
    }

    #[test]
    fn clones_are_independent_snapshots() {
        let mut s = Store::default();
        s.put(key("pods", "a", "p"), json!({"v": 1}));
        let snap = s.clone();
        s.put(key("pods", "a", "p"), json!({"v": 2}));
        assert_eq!(snap.get(&key("pods", "a", "p")).unwrap()["v"], 1);
        assert_eq!(s.get(&key("pods", "a", "p")).unwrap()["v"], 2);
    }
}
