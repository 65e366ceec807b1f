//! `Value` and `Map` answer as `serde_json::Value` and `serde_json::Map` (with `preserve_order`)
//! do: serde_json is the oracle, over generated values and edits.

use super::{from_serde, into_serde, json, Map, Value};
use proptest::prelude::*;

/// Any JSON value, its keys drawn from a few so that objects share and repeat them.
fn arb_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (-1.0e6f64..1.0e6).prop_map(serde_json::Value::from),
        "[a-z~/\"\\\\é]{0,30}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            prop::collection::vec(
                ("[a-f]{1,2}|a-key-longer-than-twenty-four-bytes", inner),
                0..8
            )
            .prop_map(|kvs| serde_json::Value::Object(kvs.into_iter().collect())),
        ]
    })
}

/// An edit of an object, applied to both representations.
#[derive(Debug, Clone)]
enum Edit {
    Insert(String, serde_json::Value),
    Remove(String),
    ShiftRemove(String),
    EntryOrInsert(String, serde_json::Value),
    Retain(String),
    IndexSet(String, serde_json::Value),
    /// Stores the map: its keys held apart ([`Map::compact`]); no change a reader sees.
    Compact,
    /// Stores the map like another with the same keys and every value this one
    /// ([`Map::compact_like`]), so the two share their keys; no change a reader sees.
    CompactLike(serde_json::Value),
    /// Sets every value through `iter_mut` (a write of values alone, which keeps stored keys
    /// shared).
    SetAll(serde_json::Value),
}

fn arb_edit() -> impl Strategy<Value = Edit> {
    let key = "[a-f]{1,2}";
    prop_oneof![
        (key, arb_value()).prop_map(|(k, v)| Edit::Insert(k, v)),
        key.prop_map(Edit::Remove),
        key.prop_map(Edit::ShiftRemove),
        (key, arb_value()).prop_map(|(k, v)| Edit::EntryOrInsert(k, v)),
        key.prop_map(Edit::Retain),
        (key, arb_value()).prop_map(|(k, v)| Edit::IndexSet(k, v)),
        Just(Edit::Compact),
        arb_value().prop_map(Edit::CompactLike),
        arb_value().prop_map(Edit::SetAll),
    ]
}

fn apply_plain(m: &mut serde_json::Map<String, serde_json::Value>, e: &Edit) -> String {
    match e {
        Edit::Insert(k, v) => format!("{:?}", m.insert(k.clone(), v.clone())),
        Edit::Remove(k) => format!("{:?}", m.remove(k)),
        Edit::ShiftRemove(k) => format!("{:?}", m.shift_remove(k)),
        Edit::EntryOrInsert(k, v) => format!("{:?}", m.entry(k.clone()).or_insert(v.clone())),
        Edit::Retain(k) => {
            m.retain(|key, _| key != k);
            String::new()
        }
        Edit::IndexSet(k, v) => {
            let mut whole = serde_json::Value::Object(std::mem::take(m));
            whole[k.as_str()] = v.clone();
            *m = match whole {
                serde_json::Value::Object(o) => o,
                _ => unreachable!("an object stays one"),
            };
            String::new()
        }
        Edit::Compact | Edit::CompactLike(_) => String::new(),
        Edit::SetAll(v) => {
            m.values_mut().for_each(|x| *x = v.clone());
            String::new()
        }
    }
}

fn apply_own(m: &mut Map, e: &Edit) -> String {
    let own = |v: &serde_json::Value| from_serde(v.clone());
    match e {
        Edit::Insert(k, v) => format!("{:?}", m.insert(k.as_str(), own(v)).map(into_serde)),
        Edit::Remove(k) => format!("{:?}", m.remove(k).map(into_serde)),
        Edit::ShiftRemove(k) => format!("{:?}", m.shift_remove(k).map(into_serde)),
        Edit::EntryOrInsert(k, v) => {
            format!(
                "{:?}",
                into_serde(m.entry(k.as_str()).or_insert(own(v)).clone())
            )
        }
        Edit::Retain(k) => {
            m.retain(|key, _| key != k);
            String::new()
        }
        Edit::IndexSet(k, v) => {
            let mut whole = Value::Object(std::mem::take(m));
            whole[k.as_str()] = own(v);
            *m = match whole {
                Value::Object(o) => o,
                _ => unreachable!("an object stays one"),
            };
            String::new()
        }
        Edit::Compact => {
            // A copy no other map shares (the test holds the map as it was before the edit),
            // so the compaction happens.
            let mut fresh: Map = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            fresh.compact();
            *m = fresh;
            String::new()
        }
        Edit::CompactLike(v) => {
            let mut like: Map = m.keys().map(|k| (k.clone(), own(v))).collect();
            like.compact();
            let mut fresh: Map = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            fresh.compact_like(&like);
            // The other map outlives the edit, so its keys stay shared with this one.
            LIKES.with(|l| l.borrow_mut().push((like.clone(), format!("{like:?}"))));
            *m = fresh;
            String::new()
        }
        Edit::SetAll(v) => {
            m.iter_mut().for_each(|(_, x)| *x = own(v));
            String::new()
        }
    }
}

thread_local! {
    /// The maps [`Edit::CompactLike`] made, with their texts then: edits of a map sharing their
    /// keys must leave them as they were.
    static LIKES: std::cell::RefCell<Vec<(Map, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keys for [`pointers_answer_as_serde_json`].
const POINTER_KEYS: &[&str] = &[
    "a",
    "status",
    "conditions",
    "seven77",
    "eight888",
    "nine99999",
    "a/b",
    "a~b",
    "~",
    "~1",
    "/",
    "é",
    "clé/é~",
    "metadata-name-longer-than-sixteen",
    "0",
    "1",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `token_end` finds the first `/` or `~` from any start, over lengths around the word
    /// steps and bytes above 0x7f.
    #[test]
    fn token_end_finds_the_first_separator(text in "[ab/~é]{0,40}", start in 0usize..48) {
        let bytes = text.as_bytes();
        let start = start.min(bytes.len());
        let naive = bytes[start..]
            .iter()
            .position(|&b| b == b'/' || b == b'~')
            .map_or(bytes.len(), |i| start + i);
        prop_assert_eq!(super::token_end(bytes, start), naive);
    }

    /// A pointer finds what serde_json's finds, over keys holding `/`, `~`, bytes above 0x7f
    /// and lengths around the eight-byte steps `pointer` scans in, and over pointers spelled
    /// with and without escapes.
    #[test]
    fn pointers_answer_as_serde_json(
        doc in prop::collection::vec(
            (
                prop::sample::select(POINTER_KEYS),
                prop::collection::vec((prop::sample::select(POINTER_KEYS), 0i64..4), 0..4),
            ),
            0..6,
        ),
        path in prop::collection::vec(prop::sample::select(POINTER_KEYS), 0..4),
        raw in any::<bool>(),
    ) {
        let mut a = serde_json::Map::new();
        for (k, members) in doc {
            let inner: serde_json::Map<String, serde_json::Value> = members
                .into_iter()
                .map(|(k, n)| (k.to_owned(), serde_json::json!([n, {"x": n}])))
                .collect();
            a.insert(k.to_owned(), serde_json::Value::Object(inner));
        }
        let a = serde_json::Value::Object(a);
        let x = from_serde(a.clone());
        let escape = |t: &str| if raw { t.to_owned() } else { t.replace('~', "~0").replace('/', "~1") };
        let base: String = path.iter().map(|t| format!("/{}", escape(t))).collect();
        for tail in ["", "/0", "/1/x", "/2", "/1", "/x"] {
            let pointer = format!("{base}{tail}");
            prop_assert_eq!(
                x.pointer(&pointer).cloned().map(into_serde),
                a.pointer(&pointer).cloned(),
                "{}", pointer
            );
        }
    }

    /// Text, debug text, equality, indexing and pointers answer as serde_json's.
    #[test]
    fn reads_answer_as_serde_json(a in arb_value(), b in arb_value(), key in "[a-f]{1,2}") {
        let (x, y) = (from_serde(a.clone()), from_serde(b.clone()));
        prop_assert_eq!(x.to_string(), a.to_string());
        prop_assert_eq!(format!("{x:#}"), format!("{a:#}"));
        prop_assert_eq!(format!("{x:?}"), format!("{a:?}"));
        prop_assert_eq!(x == y, a == b);
        prop_assert_eq!(into_serde(x.clone()), a.clone());
        prop_assert_eq!(into_serde(x[key.as_str()].clone()), a[key.as_str()].clone());
        prop_assert_eq!(into_serde(x[1].clone()), a[1].clone());
        for pointer in ["", "/a", "/a/0", "/0/b", "/b/a/1", "/a~1b", "/00"] {
            prop_assert_eq!(x.pointer(pointer).cloned().map(into_serde), a.pointer(pointer).cloned());
        }
        // Read back from text, and through MessagePack, as serde_json reads it.
        let text = a.to_string();
        let read: Value = serde_json::from_str(&text).expect("its own text");
        prop_assert_eq!(into_serde(read), a.clone());
        let packed = rmp_serde::to_vec(&x).expect("packs");
        prop_assert_eq!(packed.clone(), rmp_serde::to_vec(&a).expect("packs"));
        let unpacked: Value = rmp_serde::from_slice(&packed).expect("unpacks");
        prop_assert_eq!(unpacked, x);
    }

    /// `identical` is "prints the same text", and `compact_like` changes neither the value's
    /// text nor the reference's; a value compacted like its own stored copy is that copy.
    #[test]
    fn compact_like_shares_only_what_prints_the_same(a in arb_value(), b in arb_value()) {
        let (x, y) = (from_serde(a.clone()), from_serde(b.clone()));
        // Texts, not serde_json's `==`, which ignores members' order.
        let (text_a, text_b) = (a.to_string(), b.to_string());
        prop_assert_eq!(x.identical(&y), text_a == text_b);
        let mut z = x.clone();
        z.compact_like(&y);
        prop_assert_eq!(z.to_string(), a.to_string());
        prop_assert_eq!(y.to_string(), b.to_string());
        // Like its own copy being built: stored, not shared (only stored levels are shared).
        let mut fresh = from_serde(a.clone());
        fresh.compact_like(&x);
        prop_assert_eq!(fresh.to_string(), a.to_string());
        if let (Value::Object(f), Value::Object(o)) = (&fresh, &x) {
            prop_assert!(!Map::ptr_eq(f, o));
        }
        // Like its own copy stored: that copy.
        let mut kept = x.clone();
        kept.compact();
        let mut fresh = from_serde(a.clone());
        fresh.compact_like(&kept);
        prop_assert_eq!(fresh.to_string(), a.to_string());
        if let (Value::Object(f), Value::Object(o)) = (&fresh, &kept) {
            prop_assert!(Map::ptr_eq(f, o));
        }
        // Like a stored value (its keys held apart, to be shared).
        let mut stored = from_serde(b.clone());
        stored.compact();
        let mut w = from_serde(a.clone());
        w.compact_like(&stored);
        prop_assert_eq!(w.to_string(), text_a);
        prop_assert_eq!(stored.to_string(), text_b);
    }

    /// Edits leave the same members in the same order, answer the same, and leave a copy taken
    /// before them as it was (copy on write).
    #[test]
    fn edits_answer_as_serde_json(start in arb_value(), edits in prop::collection::vec(arb_edit(), 0..12)) {
        let mut plain = match start {
            serde_json::Value::Object(m) => m,
            other => [("x".to_owned(), other)].into_iter().collect(),
        };
        let mut own = match from_serde(serde_json::Value::Object(plain.clone())) {
            Value::Object(m) => m,
            _ => unreachable!("an object"),
        };
        for e in &edits {
            let before_plain = serde_json::Value::Object(plain.clone());
            let before_own = own.clone();
            prop_assert_eq!(apply_own(&mut own, e), apply_plain(&mut plain, e));
            prop_assert_eq!(into_serde(Value::Object(before_own)), before_plain);
            prop_assert_eq!(
                into_serde(Value::Object(own.clone())).to_string(),
                serde_json::Value::Object(plain.clone()).to_string()
            );
        }
        for (like, text) in LIKES.with(|l| std::mem::take(&mut *l.borrow_mut())) {
            prop_assert_eq!(format!("{like:?}"), text);
        }
    }
}

#[test]
fn yaml_integers_past_64_bits_read_as_serde_jsons() {
    for text in [
        "18446744073709551615",
        "-9223372036854775808",
        "123456789012345678901234567890",
    ] {
        let ours = serde_yaml_ng::from_str::<Value>(text).map(into_serde);
        let theirs = serde_yaml_ng::from_str::<serde_json::Value>(text);
        assert_eq!(
            ours.as_ref().map_err(ToString::to_string),
            theirs.as_ref().map_err(ToString::to_string),
            "{text}"
        );
    }
}

#[test]
fn a_copy_shares_until_written() {
    let a = json!({"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 1}});
    let mut b = a.clone();
    let (Value::Object(x), Value::Object(y)) = (&a, &b) else {
        unreachable!("objects")
    };
    assert!(Map::ptr_eq(x, y));
    b["spec"]["replicas"] = json!(3);
    assert_eq!(a["spec"]["replicas"], 1);
    assert_eq!(b["spec"]["replicas"], 3);
    // The level that was not written is still one allocation.
    let (Some(Value::Object(ma)), Some(Value::Object(mb))) = (a.get("metadata"), b.get("metadata"))
    else {
        unreachable!("objects")
    };
    assert!(Map::ptr_eq(ma, mb));
}

#[test]
fn json_macro_builds_what_serde_jsons_builds() {
    let name = "web";
    let replicas: i64 = 3;
    let labels = json!({"app": name});
    let list = vec!["a".to_owned(), "b".to_owned()];
    let ours = json!({
        "kind": "Deployment",
        "n": null,
        "flag": true,
        "replicas": replicas,
        "half": replicas as f64 / 2.0,
        "labels": labels,
        "list": list,
        "nested": [1, -2, [], {}, [null, {"k": name}], "x".to_owned() + "y"],
        (format!("key-{name}")): name,
        "maybe": Option::<i64>::None,
    });
    let theirs = serde_json::json!({
        "kind": "Deployment",
        "n": null,
        "flag": true,
        "replicas": replicas,
        "half": replicas as f64 / 2.0,
        "labels": {"app": name},
        "list": list,
        "nested": [1, -2, [], {}, [null, {"k": name}], "x".to_owned() + "y"],
        (format!("key-{name}")): name,
        "maybe": Option::<i64>::None,
    });
    assert_eq!(into_serde(ours.clone()), theirs);
    assert_eq!(ours.to_string(), theirs.to_string());
}

/// A level being built that something else holds too is stored as a copy (the other holder's
/// is left as it was); a level already stored stays shared.
#[test]
fn compact_copies_shared_levels_being_built_and_shares_stored_ones() {
    let building = json!({"a": {"b": 1}});
    let mut stored = json!({"c": [2]});
    stored.compact();
    let mut v = json!({"x": building.clone(), "s": stored.clone(), "y": "text"});
    v.compact();
    assert_eq!(
        v,
        json!({"x": {"a": {"b": 1}}, "s": {"c": [2]}, "y": "text"})
    );
    let level = |v: &Value, p: &str| match v.pointer(p) {
        Some(Value::Object(m)) => m.clone(),
        _ => unreachable!("{p} is an object"),
    };
    let (Value::Object(built), Value::Object(kept)) = (&building, &stored) else {
        unreachable!("objects")
    };
    assert!(!Map::ptr_eq(&level(&v, "/x"), built));
    assert!(Map::ptr_eq(&level(&v, "/s"), kept));
    assert_eq!(building, json!({"a": {"b": 1}}));
}

#[test]
fn compact_like_shares_identical_levels_and_no_others() {
    let mut like = json!({"spec": {"node": "a", "tolerations": [{"key": "k"}], "res": {"cpu": "1"}},
                      "order": {"a": 1, "b": 2}, "zero": {"n": 0.0}});
    // Only stored levels are shared.
    like.compact();
    let mut v = json!({"spec": {"node": "b", "tolerations": [{"key": "k"}], "res": {"cpu": "1"}},
                       "order": {"b": 2, "a": 1}, "zero": {"n": -0.0}});
    let text = v.to_string();
    v.compact_like(&like);
    assert_eq!(v.to_string(), text);
    let shared = |p: &str| match (v.pointer(p), like.pointer(p)) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => Map::ptr_eq(a, b),
        _ => unreachable!("{p} is an object in both"),
    };
    // Identical levels are shared; a level with a member changed, members in another order
    // or a float of another sign is not.
    assert!(shared("/spec/tolerations/0") && shared("/spec/res"));
    assert!(!shared("/spec") && !shared("/order") && !shared("/zero"));
    // Written later, the shared level is copied: the reference does not change.
    v["spec"]["res"]["cpu"] = json!("2");
    assert_eq!(like["spec"]["res"]["cpu"], "1");
}
