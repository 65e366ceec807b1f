//! `Value` written and read through serde, as `serde_json::Value` is, and the conversions to and
//! from `serde_json::Value` for what takes only that (typed structs read with
//! `serde_json::from_value`, `json_patch`).

use super::{Map, Number, Value};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(text) => s.serialize_str(text),
            Value::Array(items) => items.serialize(s),
            Value::Object(map) => map.serialize(s),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            out.serialize_entry(k.as_str(), v)?;
        }
        out.end()
    }
}

/// The reader of any serde format into a `Value`, as serde_json's: a key given twice keeps its
/// first place and its last value.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    /// As serde_json's: a number when it fits 64 bits, else its "out of range" error (YAML can
    /// write integers past 64 bits).
    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Value, E> {
        Number::deserialize(de::value::I128Deserializer::new(n)).map(Value::Number)
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Value, E> {
        Number::deserialize(de::value::U128Deserializer::new(n)).map(Value::Number)
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.into()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s.into()))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Deserialize::deserialize(d)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items.into()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value()?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// A map alone, as serde_json's: `null` reads as an empty map.
struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = Map;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_unit<E>(self) -> Result<Map, E> {
        Ok(Map::new())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Map, A::Error> {
        let mut map = Map::new();
        while let Some((key, value)) = access.next_entry::<String, Value>()? {
            map.insert(key, value);
        }
        Ok(map)
    }
}

impl<'de> Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        d.deserialize_map(MapVisitor)
    }
}

/// A `serde_json::Value` as a `Value`, its strings and arrays moved.
pub fn from_serde(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => Value::Number(n),
        serde_json::Value::String(s) => Value::String(s.into()),
        serde_json::Value::Array(a) => Value::Array(a.into_iter().map(from_serde).collect()),
        serde_json::Value::Object(m) => {
            let mut map = Map::with_capacity(m.len());
            for (k, v) in m {
                map.insert(k, from_serde(v));
            }
            Value::Object(map)
        }
    }
}

/// A `Value` as a `serde_json::Value`, for what reads only that.
pub fn into_serde(v: Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Number(n) => serde_json::Value::Number(n),
        Value::String(s) => serde_json::Value::String(s.into_string()),
        Value::Array(a) => serde_json::Value::Array(a.into_iter().map(into_serde).collect()),
        Value::Object(m) => {
            let mut map = serde_json::Map::with_capacity(m.len());
            for (k, v) in m {
                map.insert(k.into_string(), into_serde(v));
            }
            serde_json::Value::Object(map)
        }
    }
}

/// Any serializable value as a `Value` (`serde_json::to_value`).
pub fn to_value<T: Serialize + ?Sized>(v: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(v).map(from_serde)
}

/// A typed value read from a `Value` (`serde_json::from_value`, the same errors).
pub fn from_value<T: de::DeserializeOwned>(v: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(into_serde(v))
}
